-- rw_leave.lua: a writer that stops waiting for the read-write lock NAME
-- (deadline, signal, error) withdraws the intent its busy attempts recorded
-- (see rw_acquire.lua), and wakes the readers it kept out with '1' on
-- redisson_rwlock:{NAME} (Redisson's waiters take it as a write unlock and
-- simply try again). Sending it twice is harmless: the second finds nothing.
--
-- KEYS[1] the writers' intents (rlock_write_intent:{NAME})
-- KEYS[2] redisson_rwlock:{NAME}
-- ARGV[1] owner token
-- ARGV[2] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- @deadline ARGV[3]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns 1 when an intent was withdrawn, 0 when there was none (also when
-- KEYS[1] holds another type: left alone).
-- @include deadline.lua
local past_deadline = too_late(ARGV[3])
if past_deadline then
  return past_deadline
end

-- @include damaged.lua
-- (an intents key of another type holds no intent: left alone, lib/damaged.lua)
if not usable(KEYS[1], 'zset') or redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then
  return 0
end
redis.call(ARGV[2], KEYS[2], '1') -- first, so an ACL denial changes nothing
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
