-- release.lua: undo one level of an owner's hold on NAME, or every level.
-- When the count reaches zero the lock is deleted and '0' is published on the
-- release channel, exactly as Redisson's unlock does, so Redisson and rlock
-- waiters wake each other. When fair waiters are queued (RFairLock's queue has a
-- live head once the stale heads are dropped; see fair_acquire.lua), '0' goes to
-- the head's own channel (release channel .. ':' .. head) only, as Redisson's
-- RFairLock unlock does: the head is woken, not everyone. When rlock's plain
-- waiters wait for their turn, '0' goes to the one whose turn it is and '00'
-- (0 to Redisson) on the release channel (lib/turns.lua).
--
-- A request may arrive twice (its reply was lost and the client sent it again).
-- As in Redisson's unlock, applying it SETs the latch KEYS[3] (one per request)
-- to its answer for ARGV[4] ms, and a resend finds the latch and returns that
-- answer unchanged, whatever the lock's layout (rlock's or Redisson's own hash).
-- (Redisson stores 0/1 in its latches; this script stores the levels left. The
-- names never meet: each request has its own random id.)
--
-- KEYS[1] lock name   KEYS[2] release channel
-- KEYS[3] this request's latch: redisson_unlock_latch:{NAME}:OP (NAME's hash slot)
-- KEYS[4] RFairLock's queue (redisson_lock_queue:{NAME})   KEYS[5] its give-up
--         times (redisson_lock_timeout:{NAME})   KEYS[6] rlock's fair waiters
--         (rlock_waiters:{NAME}). Without KEYS[4] the queue is not looked at;
--         without KEYS[6] every waiter's score is taken as it is.
-- Then, each optional, told apart by their names:
-- an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo that acquisition
--         only, i.e. release one level only if the latch says it was applied
--         (acquired or re-entered), and drop the latch; otherwise answer {-1}
--         and change nothing (Redlock undoing a round whose answer from this
--         master was lost)
-- the plain waiters' turns, rlock_turns:{NAME}: a release that frees the lock
--         wakes the waiter whose turn it is (lib/turns.lua), not all of them
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
-- ARGV[5] (optional) '1': a release that frees the lock answers {0, channel}
-- @deadline ARGV[6]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {n}            released; n levels are still held by the owner (0: freed)
--         {0, channel}   freed, with ARGV[5] = '1': the channel '0' was published on
--                        (a resend of it answers {0}: the message went out once)
--         {-1}           no such lock
--         {-2, holder}   held by another owner ('' when no owner field can be read)
--         {-3, type}     the key is not a lock hash (foreign): never touched
--         {-4, mode}     a Redisson read-write lock (mode 'read'/'write'): not
--                        released by a plain release, whoever asks
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
-- @include deadline.lua
local past_deadline = too_late(ARGV[6])
if past_deadline then
  return past_deadline
end

local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters = KEYS[4], KEYS[5], KEYS[6]
local acquisition, turns = nil, nil
for i = 7, #KEYS do
  local prefix = string.match(KEYS[i], '^([%w_]+):')
  if prefix == 'rlock_acquire_latch' then
    acquisition = KEYS[i]
  elseif prefix == 'rlock_turns' then
    turns = KEYS[i]
  end
end
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]
-- @include reserved.lua
-- @include latch.lua
-- @include holders.lua
-- @include fair_queue.lua
-- @include history.lua
-- @include clock.lua

local early = refused(owner) or released(latch) or unapplied(acquisition)
if early then
  return early
end

local count, not_owned = owned_count(name, owner)
if not count then
  if not_owned[1] == -1 then
    log_gone_holds(server_ms()) -- it expired (or went) unseen: the history says how
  end
  log_lost_if_asked(owner)
  return not_owned
end

-- As Redisson does, HINCRBY -1; a count that is not a positive integer (the
-- hash is data) counts as one level.
local left = 0
if not all and #count <= 15 and string.match(count, '^[1-9]%d*$') then
  left = tonumber(count) - 1
end
-- Only a hold with rlock's record has a history (Redisson's writes none).
local record = log_key and redis.call('HGET', name, 'rlock:meta')
local published = nil
if left > 0 then
  left = redis.call('HINCRBY', name, owner, -1)
else
  -- Publish first (wake): if the user may not publish (an ACL without the
  -- channel), the script fails before changing anything (the queue is only read
  -- until then). Subscribers see the message only after the script has run, so
  -- they never find the lock still there.
  published = wake(publish, channel, turns)
  redis.call('DEL', name)
end
redis.call('SET', latch, left, 'PX', latch_ms)
if record then
  local now_ms = server_ms()
  log_event('released', owner, {'held_ms', held_ms(record, now_ms) or -1, 'left', left})
  if left == 0 then
    unmark_record(owner, record) -- its last renewal's marker goes with the hold
  end
end
if published and ARGV[5] == '1' then
  return {left, published}
end
return {left}
