-- Take the next job from the queue KEYS[1] and reserve it for worker
-- ARGV[1] for ARGV[2] ms, in one step: a job is always either queued or
-- reserved, never neither. KEYS[2] is the reservation key prefix, KEYS[3]
-- the job key prefix: an id whose job was deleted meanwhile is dropped.
while true do
  local id = redis.call("LPOP", KEYS[1])
  if not id then
    return false
  end
  if redis.call("EXISTS", KEYS[3] .. id) == 1 then
    redis.call("SET", KEYS[2] .. id, ARGV[1], "PX", ARGV[2])
    return id
  end
end
