-- Reserve job ARGV[1] for worker ARGV[2] for ARGV[3] ms, asked for by name
-- rather than taken from the head of the queue KEYS[1]. KEYS[2] is the job,
-- KEYS[3] its reservation, KEYS[4] the set of jobs ever made: a job asked
-- for the first time is made and queued. Returns {1} reserved, {0, pttl}
-- while someone else's reservation holds it, {-1} when it is done (gone).
if redis.call("SADD", KEYS[4], ARGV[1]) == 1 then
  redis.call("SET", KEYS[2], ARGV[4])
  redis.call("RPUSH", KEYS[1], ARGV[1])
end
if redis.call("EXISTS", KEYS[2]) == 0 then
  return {-1}
end
local pttl = redis.call("PTTL", KEYS[3])
if pttl ~= -2 then
  return {0, pttl}
end
redis.call("LREM", KEYS[1], 0, ARGV[1])
redis.call("SET", KEYS[3], ARGV[2], "PX", ARGV[3])
return {1}
