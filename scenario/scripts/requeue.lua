-- The reaper's step, in one script: put job ARGV[1] back on the queue
-- KEYS[1] if it still exists (KEYS[2]), nobody holds its reservation
-- (KEYS[3]) and the queue is empty. Checked and done apart, a job deleted
-- between the check and the push would be handed out again.
if redis.call("EXISTS", KEYS[2]) == 1 and redis.call("EXISTS", KEYS[3]) == 0
  and redis.call("LLEN", KEYS[1]) == 0 then
  redis.call("RPUSH", KEYS[1], ARGV[1])
  return 1
end
return 0
