-- force_unlock.lua: remove NAME whoever holds it, whatever its type, and wake
-- waiters (rlock's and Redisson's) with '0' on the release channel, or, when fair
-- waiters are queued (RFairLock's queue has a live head once the stale heads are
-- dropped; see fair_acquire.lua), on the head's own channel only (release channel
-- .. ':' .. head), as Redisson's RFairLock forceUnlock does. The queue stays.
-- When rlock's plain waiters wait for their turn (KEYS[11]), the one whose turn
-- it is is woken as a release wakes it (lib/turns.lua).
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- applying it SETs the latch KEYS[3] to the removed key's type for ARGV[2] ms,
-- and a resend finds it and answers as the first send did.
--
-- The other layouts: a read-write lock (a hash with 'mode') is deleted like
-- Redisson's forceUnlock does, with '0' on its channel KEYS[7]
-- (redisson_rwlock:{NAME}); a semaphore (NAME a string, its permits in the
-- sorted set KEYS[8]) is deleted with its permits and rlock's records of them
-- (KEYS[10]), and the number of permits it had out is published on KEYS[9]
-- (redisson_sc:{NAME}: Redisson's semaphore waiters wake on a positive count);
-- the next --limit N creates it afresh.
--
-- KEYS[1] lock name   KEYS[2] release channel
-- KEYS[3] this request's latch: redisson_unlock_latch:{NAME}:OP (NAME's hash slot)
-- KEYS[4] RFairLock's queue (redisson_lock_queue:{NAME})   KEYS[5] its give-up
--         times (redisson_lock_timeout:{NAME})   KEYS[6] rlock's fair waiters
--         (rlock_waiters:{NAME}). Without KEYS[4] the queue is not looked at;
--         without KEYS[6] every waiter's score is taken as it is.
-- KEYS[7] redisson_rwlock:{NAME}   KEYS[8] {NAME}:timeout   KEYS[9] redisson_sc:{NAME}
-- KEYS[10] rlock_permits:{NAME}    (7-10 optional: without them, only the above)
-- KEYS[11] (optional) the plain waiters' turns, rlock_turns:{NAME}
-- ARGV[1] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[2] latch lifetime in ms
-- ARGV[3] (optional) '1': a removal answers {1, type, channel}
-- ARGV[4], ARGV[5] (optional, force-unlock --if-dead; '' for none): an owner token and the
--         'rlock:meta' record read when the holder was judged gone. The lock is
--         removed only if it is still that hold: a lock hash (no 'mode') with
--         that owner field and that record (renewed_at_ms, kept_until_ms and
--         log_mark aside: a renewal, and its history marker, is no new hold);
--         else nothing changes.
-- @deadline ARGV[6]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, type}   removed a key of that type (or a resend of that removal)
--         {1, type, channel}  removed, with ARGV[3] = '1': the channel '0' was
--                     published on (a resend of it answers {1, type})
--         {0}         there was nothing to remove
--         {2}         with ARGV[4]: the lock is no longer that hold (released,
--                     taken again, re-recorded): nothing changed
-- @include deadline.lua
local past_deadline = too_late(ARGV[6])
if past_deadline then
  return past_deadline
end

local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters = KEYS[4], KEYS[5], KEYS[6]
-- @include latch.lua
-- @include fair_queue.lua
-- @include history.lua

local stored = latch_text(latch)
if stored then
  return {1, stored}
end
local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {0}
end
-- Whether two raw records are of one hold: equal, or equal but for what a
-- renewal changes (renewed_at_ms, kept_until_ms, and log_mark: the history's
-- marker of the last renewal). Anything that does not decode to the same flat values is not.
local renewal_fields = {renewed_at_ms = true, log_mark = true, kept_until_ms = true}
local function same_hold(raw, expected)
  if raw == expected then
    return true
  end
  local a, b = decode_record(raw), decode_record(expected)
  if not a or not b then
    return false
  end
  for k, v in pairs(a) do
    if not renewal_fields[k] and b[k] ~= v then
      return false
    end
  end
  for k, v in pairs(b) do
    if not renewal_fields[k] and a[k] ~= v then
      return false
    end
  end
  return true
end

local expected_owner, expected_record = ARGV[4], ARGV[5]
if (log_key and #ARGV < 6) or expected_owner == '' then
  -- the last argument is the history's, or none was given ('' before the deadline)
  expected_owner, expected_record = nil, nil
end

-- The removal in the history (force-unlocked; the client's context says by whom
-- and, for --if-dead, the verdict): for a lock with rlock's records only
-- (Redisson's writes none), before anything is deleted. The owner is the
-- hold's first owner field ('' when none).
local function log_removal()
  if not log_key then
    return
  end
  local now_ms, holder, raw, ours = server_ms(), '', nil, false
  if kind == 'hash' then
    local fields = redis.call('HKEYS', name)
    for _, field in ipairs(fields) do
      if string.sub(field, 1, 10) == 'rlock:meta' then
        ours = true
      elseif field ~= 'mode' and string.sub(field, 1, 6) ~= 'rlock:' and holder == '' and #fields <= 1000 then
        holder = field
      end
    end
    raw = redis.call('HGET', name, 'rlock:meta')
  elseif KEYS[10] and KEYS[10] ~= log_key then
    ours = redis.call('EXISTS', KEYS[10]) == 1
  end
  if ours then
    log_event('force-unlocked', holder, {'held_ms', held_ms(raw, now_ms) or -1})
  end
end
if expected_owner and (kind ~= 'hash' or redis.call('HEXISTS', name, 'mode') == 1
    or redis.call('HEXISTS', name, expected_owner) == 0
    or not same_hold(redis.call('HGET', name, 'rlock:meta'), expected_record)) then
  return {2}
end
-- Publish first, so an ACL denial changes nothing (the queue is only read until then).
local rw_channel, permits, permit_channel, permit_records = KEYS[7], KEYS[8], KEYS[9], KEYS[10]
if rw_channel == log_key then
  rw_channel, permits = nil, nil -- KEYS[7] to KEYS[10] absent
end
if rw_channel and kind == 'hash' and redis.call('HEXISTS', name, 'mode') == 1 then
  redis.call(ARGV[1], rw_channel, '0')
  log_removal()
  redis.call('DEL', name)
  redis.call('SET', latch, kind, 'PX', ARGV[2])
  return ARGV[3] == '1' and {1, kind, rw_channel} or {1, kind}
end
if permits and kind == 'string' and redis.call('TYPE', permits)['ok'] == 'zset' then
  local out = redis.call('ZCARD', permits)
  redis.call(ARGV[1], permit_channel, tostring(math.max(out, 1)))
  log_removal()
  redis.call('DEL', name, permits, permit_records)
  redis.call('SET', latch, kind, 'PX', ARGV[2])
  return ARGV[3] == '1' and {1, kind, permit_channel} or {1, kind}
end
local turns = KEYS[11]
if turns and string.sub(turns, 1, 12) ~= 'rlock_turns:' then
  turns = nil -- KEYS[11] absent: the last key is the history's
end
local published = wake(ARGV[1], channel, turns)
log_removal()
redis.call('DEL', name)
redis.call('SET', latch, kind, 'PX', ARGV[2])
if ARGV[3] == '1' then
  return {1, kind, published}
end
return {1, kind}
