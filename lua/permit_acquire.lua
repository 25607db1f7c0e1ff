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
--
-- Returns {1, count, fence, lease_ms}   acquired (a fresh permit, or a resend of it)
--         {2, count, fence, lease_ms}   re-entered (or a resend of it)
--         {0, holder, ttl, 'semaphore', meta, ''}   every permit is held: holder
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
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, timeouts, channel, fence_key, records, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local limit, publish = tonumber(ARGV[5]), ARGV[6]
local non_expiring = 922337203685477 -- Redisson's lease end of a permit taken without a lease

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
end

if not own_token then
  local stored = redis.call('GET', latch)
  if stored then
    local answer = {}
    for number in string.gmatch(stored, '%-?%d+') do
      answer[#answer + 1] = tonumber(number)
    end
    if #answer == 4 then
      return answer
    end -- not a latch of ours (forged): handled as a new request
  end
end

-- What NAME is: 'none', a semaphore ('string' holding an integer), or another
-- layout / a foreign key, which is busy and never touched.
local kind = redis.call('TYPE', name)['ok']
if kind == 'hash' then
  -- A lock hash (RLock, RFairLock, RReadWriteLock): who holds it, as acquire.lua
  -- tells. A hash with more than 256 fields is not a lock: no holder is read.
  local holder, meta = '', false
  local layout = redis.call('HGET', name, 'mode')
  layout = layout and (#layout <= 16 and layout or '?') or 'exclusive'
  if redis.call('HLEN', name) <= 256 then
    for _, field in ipairs(redis.call('HKEYS', name)) do
      if holder == '' and #field <= 1024 and not reserved(field) then
        holder = field
      end
    end
    if redis.call('HEXISTS', name, 'rlock:meta') == 1 then
      meta = ''
      if redis.call('HSTRLEN', name, 'rlock:meta') <= 8192 then
        meta = redis.call('HGET', name, 'rlock:meta')
      end
    end
  end
  return {0, holder, redis.call('PTTL', name), 'hash', meta, layout}
end
local free = nil
if kind == 'string' then
  local value = redis.call('GET', name)
  if #value <= 18 and string.match(value, '^%-?%d+$') then
    free = tonumber(value)
  end
end
if kind ~= 'none' and free == nil then
  return {0, '', redis.call('PTTL', name), kind, false}
end

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local resized = false
if free == nil then
  -- No semaphore: create it with N permits. Permits left in the set without
  -- it (NAME deleted, e.g. by force-unlock) are void: their holders'
  -- renewals already answer "gone" (permit_renew.lua).
  redis.call('DEL', timeouts, records)
  free = limit
  redis.call('SET', name, free)
  resized = true
end

-- Give back the permits whose lease has ended (at most 1000 a call: the rest
-- stay counted as held until a later call, never the other way round).
local expired = redis.call('ZRANGEBYSCORE', timeouts, '-inf', now_ms, 'LIMIT', 0, 1000)
if #expired > 0 then
  redis.call('ZREM', timeouts, unpack(expired))
  redis.call('HDEL', records, unpack(expired))
  free = redis.call('INCRBY', name, #expired)
  if free > 0 then
    redis.call(publish, channel, free)
  end
end

-- The holder record of `who` decoded (a table), or nil. It is data: only its
-- fence (checked against the counter) and count are used, both bounded.
local function record_of(who)
  local raw = redis.call('HGET', records, who)
  if not raw or #raw > 8192 then
    return nil
  end
  local ok, decoded = pcall(cjson.decode, raw)
  if ok and type(decoded) == 'table' then
    return decoded
  end
  return nil
end
local function levels(record)
  local count = record and record.count
  if type(count) == 'number' and count >= 1 and count < 1e15 then
    return math.floor(count)
  end
  return 1
end

-- A fresh fencing token. A missing counter (first use, or a server that lost
-- its data) starts at the server's clock in ms; an existing one (also
-- Redisson's RFencedLock's) counts on.
local function new_fence()
  if redis.call('EXISTS', fence_key) == 0 then
    redis.call('SET', fence_key, now_ms)
    return now_ms
  end
  return redis.call('INCR', fence_key)
end
-- The fence of `who`'s current permit: its record's, when it is one the
-- counter has handed out; otherwise a fresh one (written into the record).
local function held_fence(record)
  local fence = record and record.fence
  local counter = tonumber(redis.call('GET', fence_key))
  if type(fence) == 'number' and counter and fence >= 1 and fence <= counter and fence == math.floor(fence) then
    return fence, record
  end
  return new_fence(), nil
end

-- The records live as long as the longest lease they describe, never longer.
local function keep_records(lease_left)
  if redis.call('PTTL', records) < lease_left then
    redis.call('PEXPIRE', records, lease_left)
  end
end
-- `owner`'s record: a fresh one, for a permit whose lease ends `lease_left` from now.
local function write_record(fence, count, lease_left)
  redis.call('HSET', records, owner, cjson.encode({
    host = ARGV[7], pid = tonumber(ARGV[8]), command = ARGV[9], version = ARGV[10],
    acquired_at_ms = now_ms, ttl_ms = lease, fence = fence, count = count,
  }))
  keep_records(lease_left)
end

-- Applies an answer: remembered in the latch when the token was given.
local function applied(code, count, fence, lease_ms)
  if not own_token then
    redis.call('SET', latch, string.format('%d %d %.0f %d', code, count, fence, lease_ms), 'PX', latch_ms)
  end
  return {code, count, fence, lease_ms}
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
  local fence = new_fence()
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
local meta = false
if holder ~= '' and redis.call('HEXISTS', records, holder) == 1 then
  meta = ''
  if redis.call('HSTRLEN', records, holder) <= 8192 then
    meta = redis.call('HGET', records, holder)
  end
end
return {0, holder, ttl, 'semaphore', meta, ''}
