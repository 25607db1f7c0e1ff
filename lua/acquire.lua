-- acquire.lua: take the lock NAME for an owner, or re-enter it.
--
-- Redisson's RLock format: NAME is a hash {owner token = reentry count}, the lease
-- is the key's PEXPIRE. rlock adds the field 'rlock:meta' (JSON about the holder)
-- and takes a fencing token from Redisson's RFencedLock counter on each fresh
-- acquisition.
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- the second time it must answer as the first did, without counting twice.
--  * ARGV[3] = '1': the owner token was made by the client for this request, so
--    nobody else has it; finding it in the hash means the first send was applied,
--    and the answer is "acquired" (code 1) with the hold as it is now.
--  * ARGV[3] = '0' (a token given by the user: re-entry is intended): applying
--    the request also SETs the latch KEYS[3] (one per request) to its answer
--    for ARGV[4] ms; a resend finds it and returns that answer unchanged.
--
-- KEYS[1] lock name   KEYS[2] fencing counter   KEYS[3] this request's latch
--         (rlock_acquire_latch:{NAME}:OP)
-- KEYS[4] RFairLock's queue (redisson_lock_queue:{NAME})   KEYS[5] its give-up
--         times (redisson_lock_timeout:{NAME})   KEYS[6] rlock's fair waiters
--         (rlock_waiters:{NAME}); all in NAME's hash slot. A plain acquire never
--         jumps that queue: a free lock whose queue has a live head (after the
--         stale heads are dropped, as every RFairLock script does; see
--         fair_acquire.lua) that is not this owner is busy. Without KEYS[4] the
--         queue is not looked at; without KEYS[6] every waiter's score is taken
--         as it is.
-- KEYS[7] (optional) the plain waiters' turns, rlock_turns:{NAME}
--         (lib/turns.lua), with ARGV[13] and ARGV[14]; given, the record of a
--         fresh hold says that its release names the waiters' turns
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] '1' the token is the client's own, '0' it was given
-- ARGV[4] latch lifetime in ms
-- ARGV[5] host  ARGV[6] pid  ARGV[7] command  ARGV[8] rlock version (the record)
-- ARGV[9] the host's boot id  ARGV[10] the holder process's start time (clock
--         ticks after boot), for force-unlock --if-dead (either '' or absent: not recorded)
-- ARGV[11] '1': the process will renew the hold (rlock run): a re-entry makes
--         the record name it (lib/record.lua name_renewer); else, or absent, a
--         re-entry leaves the record as it is
-- @deadline ARGV[12]: changes nothing when run after this server time (ms; lib/deadline.lua)
-- ARGV[13] (with KEYS[7]) the ms this waiter waits at most from now: held by
--         another owner, it goes into KEYS[7] until then ('' or '0': not a
--         waiter, nothing is put in)
-- ARGV[14] (with KEYS[7]) '1': this waiter was put in KEYS[7] by an earlier
--         attempt; taking the lock takes it out, and the first waiters left
--         are told they are at the head: 'held' with ARGV[16] on ARGV[15] ..
--         ':' .. their owner token (lib/turns.lua), when no release named it
-- ARGV[15] (with KEYS[7]) the release channel (redisson_lock__channel:{NAME})
-- ARGV[16] (with KEYS[7]) 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
--
-- Returns {1, count, fence, lease_ms}        acquired (fresh, or a resend of it)
--         {2, count, fence, lease_ms}        re-entered (or a resend of it)
--         (a resend answered from the latch adds a fifth element 1: an earlier
--         send applied it, and its lease runs from then; found by the client's
--         own token, lease_ms is the lease left now)
--         {0, holder, pttl, type, meta}      held by someone else (type 'hash' or
--                                            a foreign type such as 'string'; holder
--                                            '' when no owner field can be read; meta
--                                            the raw 'rlock:meta', '' when longer than
--                                            8 KiB, false when absent)
--         {0, holder, pttl, 'hash', meta, false, 1}  held by another plain hold,
--                                            and this waiter (ARGV[13]) waits for its
--                                            turn in KEYS[7], at the head (2: behind
--                                            it; lib/turns.lua)
--         {0, head, -2, 'hash', record}      free, but fair waiters are queued: head
--                                            is the first live one, record its
--                                            rlock_waiters record (false: Redisson's)
--         {0, '', -1, 'string', false, 'semaphore'}  NAME is a --limit semaphore (a
--                                            whole number without expiry): busy
--         {0, holder, pttl, 'hash', meta, mode}  NAME is a Redisson read-write lock
--                                            (mode 'read' or 'write'): busy for a
--                                            plain acquire, even with a reader's own
--                                            token (no re-entry across layouts)
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--         error 'DAMAGED the key KEY is ...'   a fresh acquisition, and the fencing
--                 counter is another type, or a value INCR cannot raise: nothing
--                 changed (lib/damaged.lua; a re-entry takes no token and goes on;
--                 a fair queue or turns key of another type is left alone instead)
-- @include deadline.lua
local past_deadline = too_late(ARGV[12])
if past_deadline then
  return past_deadline
end

local name, fence_key, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters, turns = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local process_at = 9 -- lib/record.lua
if turns and string.sub(turns, 1, 12) ~= 'rlock_turns:' then
  turns = nil -- KEYS[7] absent: the last key is the history's
end
local wait_ms = turns and tonumber(ARGV[13]) or 0
-- @include reserved.lua
-- @include exclusive.lua
-- @include fair_queue.lua

local early = refused(owner) or resent()
if early then
  return early
end

-- A waiter's turns, when this attempt writes there: left alone when that key
-- holds another type (lib/damaged.lua): no turn is kept, a release wakes all.
if turns and (wait_ms > 0 or ARGV[14] == '1') then
  turns = usable(turns, 'zset')
  wait_ms = turns and wait_ms or 0
end

-- Taken: this waiter's turn is over.
local function took(answer)
  if turns and ARGV[14] == '1' and not answer.err then
    taken_turn(turns, owner, ARGV[16], ARGV[15], server_ms())
  end
  return answer
end

-- Free, and no fair queue beside it (the usual case): one command says so.
if redis.call('EXISTS', name, queue or name) == 0 then
  return took(take(server_ms(), turns ~= nil))
end

local kind = redis.call('TYPE', name)['ok']

if kind == 'none' then
  local now_ms = server_ms()
  queue_or_nothing()
  if queue then
    -- (live_head tidies the queue: the counter is checked before that write)
    local damaged = fence_damaged()
    if damaged then
      return damaged
    end
    local head, record = live_head(now_ms)
    if head and head ~= owner then
      return {0, head, -2, 'hash', record and redis.call('HGET', waiters, head) or false}
    end
  end
  return took(take(now_ms, turns ~= nil))
end

if kind ~= 'hash' then
  -- A --limit semaphore (RPermitExpirableSemaphore: a whole number of free
  -- permits, without expiry) is said to be one, not a foreign key.
  local pttl = redis.call('PTTL', name)
  if kind == 'string' and pttl == -1 then
    local value = redis.call('GET', name)
    if #value <= 20 and string.match(value, '^%-?%d+$') then
      return {0, '', pttl, kind, false, 'semaphore'}
    end
  end
  return {0, '', pttl, kind, false}
end

local answer, held = attempt_held(ARGV[11] == '1')
if held then
  return took(answer)
end
if wait_ms > 0 and not answer[6] then
  -- Held by another plain hold: a waiter waits for its turn (lib/turns.lua).
  answer[6], answer[7] = false, wait_turn(turns, owner, server_ms(), wait_ms)
end
return answer
