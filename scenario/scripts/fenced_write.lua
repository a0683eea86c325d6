-- The protected resource's fence check: SET KEYS[1] ARGV[2] only if the
-- fence ARGV[1] is above the last fence seen, kept in KEYS[2].
-- Returns 1 when written, 0 when the fence is stale.
local last = tonumber(redis.call("GET", KEYS[2]) or "0")
local fence = tonumber(ARGV[1])
if fence > last then
  redis.call("SET", KEYS[2], fence)
  redis.call("SET", KEYS[1], ARGV[2])
  return 1
end
return 0
