-- Compare-and-delete: delete KEYS[1] only if it still holds our token.
-- Returns 1 when deleted, 0 when another owner holds it, -1 when it is gone.
local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then
  return redis.call("DEL", KEYS[1])
elseif v == false then
  return -1
end
return 0
