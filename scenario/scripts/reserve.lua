-- Take the next job from the queue KEYS[1] and reserve it for worker
-- ARGV[1] for ARGV[2] ms, in one step: a job is always either queued or
-- reserved, never neither. KEYS[2] is the reservation key prefix.
local id = redis.call("LPOP", KEYS[1])
if not id then
  return false
end
redis.call("SET", KEYS[2] .. id, ARGV[1], "PX", ARGV[2])
return id
