-- Atomic check-and-decrement of the stock counter KEYS[1].
-- Returns {1, stock after} on a sale, {0, stock} when nothing is left.
local s = tonumber(redis.call("GET", KEYS[1]) or "0")
if s >= 1 then
  return {1, redis.call("DECR", KEYS[1])}
end
return {0, s}
