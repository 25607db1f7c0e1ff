-- permit_acquire.lua: take one of the N permits of NAME for an owner (--limit N),
-- or re-enter the one it holds.
--
-- Redisson's RPermitExpirableSemaphore format: NAME is a string, the number of
-- free permits; {NAME}:timeout is a sorted set, permit id -> absolute lease end
-- in ms. rlock's permit id is the owner token, and its lease end is in server
-- time (Redisson writes its client's clock; its non-expiring permits carry
-- 922337203685477). Expired permits are given back first, as every Redisson
-- script does: removed from the set, added to NAME, and the new count
-- published on redisson_sc:{NAME} (Redisson's waiters wake on a positive count).
-- rlock adds a hash rlock_permits:{NAME}, owner -> JSON about the holder (as
-- acquire.lua's 'rlock:meta', plus 'count', its re-entry levels), removed with
-- the permit, and a fencing token from Redisson's counter on each fresh permit.
--
-- Size: the total is free + held (NAME + the set's size). A NAME that does
-- not exist is created with ARGV[5] permits; permits left in the set without
-- it are void (dropped, with their records). A total other than ARGV[5] is set
-- to ARGV[5] when no permit is held (as Redisson's setPermits); while permits
-- are held it is refused: {-5, ...}.
--
-- Re-entry: an owner that holds a permit and asks again keeps its one permit;
-- its level count goes up (release undoes one level; the permit returns at
-- zero), and its lease is only ever lengthened.
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- the second time it must answer as the first did, without counting twice.
--  * ARGV[3] = '1': the owner token was made by the client for this request, so
--    nobody else has it; finding it in the set means the first send was
--    applied, and the answer is "acquired" (code 1) with the hold as it is now.
--  * ARGV[3] = '0' (a token given by the user: re-entry is intended): applying
--    the request also SETs the latch KEYS[6] (one per request) to its answer
--    for ARGV[4] ms; a resend finds it and returns that answer unchanged.
--
-- KEYS[1] NAME (free permits)          KEYS[2] {NAME}:timeout (permit leases)
-- KEYS[3] redisson_sc:{NAME} (channel) KEYS[4] fencing counter (redisson_lock_token:{NAME})
-- KEYS[5] rlock_permits:{NAME} (holder records)
-- KEYS[6] this request's latch (rlock_acquire_latch:{NAME}:OP); all in NAME's hash slot
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] '1' the token is the client's own, '0' it was given
-- ARGV[4] latch lifetime in ms ARGV[5] N, the number of permits (1..10000)
-- ARGV[6] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[7] host  ARGV[8] pid  ARGV[9] command  ARGV[10] rlock version (the record)
-- ARGV[11] the host's boot id  ARGV[12] the holder process's start time (clock
--         ticks after boot), for force-unlock --if-dead (either '' or absent: not recorded)
-- @deadline ARGV[13]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, count, fence, lease_ms}   acquired (a fresh permit, or a resend of it)
--         (from the latch: a fifth element 1, as acquire.lua says)
--         {2, count, fence, lease_ms}   re-entered (or a resend of it)
--         {0, holder, ttl, 'string', meta, 'semaphore'}   every permit is held: holder
--                                       is the permit whose lease ends first, ttl
--                                       the ms until then (-1: no permit ends),
--                                       meta its record ('' when over 8 KiB,
--                                       false when none: not rlock's)
--         {0, holder, pttl, 'hash', meta, layout}   NAME is a lock hash: layout
--                                       'exclusive' (RLock, RFairLock), or
--                                       Redisson's read-write 'read' / 'write'
--         {0, '', pttl, type, false}    a key of another type (or a string that
--                                       is not a count): never touched
--         {-5, total, held}             NAME has `total` permits, `held` of them
--                                       held, and total ~= ARGV[5]: nothing changed
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of a lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--         error 'DAMAGED the key KEY is ...'   the fencing counter, the permits'
--                 leases or their records hold another type (or the counter a
--                 value INCR cannot raise): nothing changed (lib/damaged.lua)
-- @include deadline.lua
local past_deadline = too_late(ARGV[13])
if past_deadline then
  return past_deadline
end

local name, timeouts, channel, fence_key, records, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local process_at = 11 -- lib/record.lua
local limit, publish = tonumber(ARGV[5]), ARGV[6]
local non_expiring = 922337203685477 -- Redisson's lease end of a permit taken without a lease
-- @include reserved.lua
-- @include acquisition.lua
-- @include clock.lua
-- @include permits.lua

local early = refused(owner) or resent() or fence_damaged()
if early then
  return early
end

-- What NAME is: 'none', a semaphore ('string' holding an integer), or another
-- layout / a foreign key, which is busy and never touched.
local kind, free = semaphore()
if kind == 'hash' then
  -- A lock hash (RLock, RFairLock, RReadWriteLock): who holds it, as acquire.lua
  -- tells, and its layout.
  return busy_answer(name, rw_mode(name) or 'exclusive')
end
if kind ~= 'none' and free == nil then
  return {0, '', redis.call('PTTL', name), kind, false}
end

-- A semaphore's permits and records: of their types before anything is
-- written (without the semaphore they are void, and deleted below).
local damaged = free ~= nil and permits_damaged()
if damaged then
  return damaged
end

local now_ms = server_ms()

local resized = false
if free == nil then
  log_gone_holds(now_ms) -- the previous holds ended unseen: the history says how
  -- No semaphore: create it with N permits. Permits left in the set without
  -- it (NAME deleted, e.g. by force-unlock) are void: their holders'
  -- renewals already answer "gone" (permit_renew.lua).
  redis.call('DEL', timeouts, records)
  free = limit
  redis.call('SET', name, free)
  resized = true
end

-- Expired permits go back first, as every Redisson script does.
free = give_back_expired(free, now_ms)

-- The fence of `who`'s current permit: its record's, when it is one the
-- counter has handed out; otherwise a fresh one (written into the record). A
-- record is data: only its fence (checked so) and count (levels) are used.
local function held_fence(record)
  local fence = record and record.fence
  local counter = fence_now -- (read by fence_damaged; 0: none)
  if type(fence) == 'number' and counter and fence >= 1 and fence <= counter and fence == math.floor(fence) then
    return fence, record
  end
  return new_fence(now_ms), nil
end

-- The records live as long as the longest lease they describe, never longer.
local function keep_records(lease_left)
  -- (a lease end is a score anyone can write: whole ms, at most 365 days)
  lease_left = math.min(math.floor(lease_left), 31536000000)
  if redis.call('PTTL', records) < lease_left then
    redis.call('PEXPIRE', records, string.format('%.0f', math.max(lease_left, 1)))
  end
end
-- `owner`'s record: a fresh one, for a permit whose lease ends `lease_left` from now.
local function write_record(fence, count, lease_left)
  redis.call('HSET', records, owner, holder_record(7, now_ms, lease, fence, count))
  keep_records(lease_left)
end

local mine = tonumber(redis.call('ZSCORE', timeouts, owner))
if mine and own_token then
  -- A resend of an acquisition that was applied: the hold as it is now.
  local record = record_of(owner)
  local fence, kept = held_fence(record)
  if not kept then
    write_record(fence, 1, mine - now_ms)
  end
  return {1, levels(record), fence, mine - now_ms}
end

local held = redis.call('ZCARD', timeouts)
if free + held ~= limit then
  if held > 0 then
    return {-5, free + held, held}
  end
  -- Nobody holds a permit: resize, as Redisson's setPermits does (INCRBY
  -- keeps an expiry someone gave the key).
  free = redis.call('INCRBY', name, limit - free)
  resized = true
end

if mine then
  -- Re-entry: one more level on the same permit, and its lease only lengthened.
  local record = record_of(owner)
  local count = levels(record) + 1
  local fence, kept = held_fence(record)
  local lease_end = math.max(mine, now_ms + lease)
  redis.call('ZADD', timeouts, lease_end, owner)
  if kept then
    kept.count = count
    redis.call('HSET', records, owner, cjson.encode(kept))
    keep_records(lease_end - now_ms)
  else
    write_record(fence, count, lease_end - now_ms)
  end
  return applied(2, count, fence, lease_end - now_ms)
end

if free >= 1 then
  free = redis.call('DECRBY', name, 1)
  redis.call('ZADD', timeouts, now_ms + lease, owner)
  local fence = new_fence(now_ms)
  write_record(fence, 1, lease)
  if free > 0 and resized then
    -- Created or resized: Redisson's waiters learn there are permits to take.
    redis.call(publish, channel, free)
  end
  return applied(1, 1, fence, lease)
end

-- Busy: the permit whose lease ends first (skipping Redisson's non-expiring
-- ones) tells when to look again.
local holder, ttl = '', -1
local first = redis.call('ZRANGEBYSCORE', timeouts, '-inf', '(' .. non_expiring, 'WITHSCORES', 'LIMIT', 0, 1)
if #first == 2 then
  holder, ttl = first[1], math.max(tonumber(first[2]) - now_ms, 1)
else
  local any = redis.call('ZRANGE', timeouts, 0, 0)
  holder = any[1] or ''
end
local meta = holder ~= '' and raw_field(records, holder)
return {0, holder, ttl, 'string', meta, 'semaphore'}
