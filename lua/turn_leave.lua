-- turn_leave.lua: a plain waiter queued for its turn (lib/turns.lua) that gives
-- up (its deadline, a signal, an error) leaves rlock_turns:{NAME} at once. When
-- the lock is free then (its turn may have come just before it gave up), the
-- next waiter's turn is given as a release gives it, so nobody waits for one
-- that left. While the lock is held, the first waiters left are told they are
-- at the head (lib/turns.lua tell_head).
--
-- Sending it twice is harmless: the second send finds nothing to remove (and
-- names a turn only while the lock is free, as the first did).
--
-- KEYS[1] lock name   KEYS[2] release channel (redisson_lock__channel:{NAME})
-- KEYS[3] the turns (rlock_turns:{NAME}); all in NAME's hash slot
-- ARGV[1] owner token
-- ARGV[2] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- @deadline ARGV[3]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1}   it was queued and has left
--         {0}   it was not queued (also when KEYS[3] holds another type: left alone)
-- @include deadline.lua
local past_deadline = too_late(ARGV[3])
if past_deadline then
  return past_deadline
end

local name, channel, turns = KEYS[1], KEYS[2], KEYS[3]
local owner, publish = ARGV[1], ARGV[2]
-- @include turns.lua
-- @include damaged.lua

-- A turns key of another type holds no waiter: left alone (lib/damaged.lua).
if not usable(turns, 'zset') then
  return {0}
end
local left = redis.call('ZREM', turns, owner)
if redis.call('EXISTS', turns) == 1 then
  -- Best effort: a message the user may not send (ACL) does not undo the leave.
  if redis.call('EXISTS', name) == 0 then
    pcall(wake_plain, turns, publish, channel, server_ms())
  elseif left == 1 then
    tell_head(turns, publish, channel, server_ms(), 'held') -- its place at the head went to the next
  end
end
return {left}
