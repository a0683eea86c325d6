-- SET KEYS[1] ARGV[1] NX PX ARGV[2]; on success only, take the next fence
-- from the counter KEYS[2]. Returns the fence, or 0 when the lock is taken.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2])
end
return 0
