-- Compare-and-PEXPIRE: extend KEYS[1] to ARGV[2] ms only if it holds our token.
-- Returns 1 when extended, 0 when another owner holds it, -1 when it is gone.
local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
elseif v == false then
  return -1
end
return 0
