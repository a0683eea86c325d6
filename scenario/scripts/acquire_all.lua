-- Take every key in KEYS with token ARGV[1] and TTL ARGV[2] ms, or none:
-- returns 1 when all were free and are now held, 0 otherwise.
for i = 1, #KEYS do
  if redis.call("EXISTS", KEYS[i]) == 1 then
    return 0
  end
end
for i = 1, #KEYS do
  redis.call("SET", KEYS[i], ARGV[1], "PX", ARGV[2])
end
return 1
