-- Raise the fence counter KEYS[1] to ARGV[1] if it is below: a Redlock
-- fence is the highest counter of the nodes that granted it, and every one
-- of them must count past it for the next holder's majority to do so.
local n = tonumber(ARGV[1])
if tonumber(redis.call("GET", KEYS[1]) or "0") < n then
  redis.call("SET", KEYS[1], n)
end
return n
