-- Heartbeat: extend the reservation KEYS[1] to ARGV[2] ms only if worker
-- ARGV[1] still holds it. 1 extended, 0 lapsed or another worker's.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
