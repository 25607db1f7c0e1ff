-- fair_leave.lua: a fair waiter that gives up (its deadline, a signal, an error)
-- leaves RFairLock's queue at once, as Redisson's acquireFailed does: out of the
-- queue redisson_lock_queue:{NAME}, its give-up time and rlock's record of it; the
-- Redisson waiters behind it get its share of their give-up time taken off, as
-- Redisson's acquireFailed takes the leaver's wait off its followers (see
-- lower_redisson_followers in lib/fair_queue.lua). When it was the head and the lock is
-- free, the new live head is woken with '0' on its own channel (Redisson's
-- acquireFailed wakes nobody: its waiters look again when their wait runs out).
--
-- Sending it twice is harmless: the second send finds nothing to remove.
--
-- KEYS[1] lock name   KEYS[2] queue (redisson_lock_queue:{NAME})
-- KEYS[3] give-up times (redisson_lock_timeout:{NAME})
-- KEYS[4] rlock's fair waiters (rlock_waiters:{NAME})
-- KEYS[5] release channel (redisson_lock__channel:{NAME}); all in NAME's hash slot
-- ARGV[1] owner token
-- ARGV[2] the waiter's give-up window in ms (its share of the followers' times)
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- @deadline ARGV[4]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1}   it was queued and has left
--         {0}   it was not queued (its record, if any, is gone too)
--         error 'ERR rlock: owner token is empty or reserved'   nothing changed
--         error 'DAMAGED the key KEY is ...'   the queue, its give-up times or
--                 rlock's waiter records hold another type: nothing changed
--                 (lib/damaged.lua)
-- @include deadline.lua
local past_deadline = too_late(ARGV[4])
if past_deadline then
  return past_deadline
end

local name, queue, timeouts, waiters, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, window, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]
-- @include reserved.lua
-- @include fair_queue.lua

local refusal = refused(owner) or queue_damaged()
if refusal then
  return refusal
end

-- ---- this script's own

local _, position = queue_position(owner)
if position then
  redis.call('LREM', queue, 0, owner)
  lower_redisson_followers(position - 1, window)
end
redis.call('ZREM', timeouts, owner)
redis.call('HDEL', waiters, owner)

local now_ms = server_ms()
if position == 1 and redis.call('EXISTS', name) == 0 then
  local head = live_head(now_ms)
  if head then
    -- Best effort: a publish the user may not send (ACL) does not undo the leave.
    redis.pcall(publish, channel .. ':' .. head, '0')
  end
end
expire_queue(now_ms)
return {position and 1 or 0}
