-- rw_acquire.lua: take the read or the write side of the read-write lock NAME
-- for an owner, or re-enter it.
--
-- Redisson's RReadWriteLock format: NAME is a hash with 'mode' = 'read' or
-- 'write'. A reader's field is its owner token = reentry count, and each level
-- i has a lease key {NAME}:OWNER:rwlock_timeout:i (set to 1, PEXPIRE lease);
-- the hash's PEXPIRE is the longest of them. A writer's field is OWNER:write =
-- count, the lease is the hash's PEXPIRE. Many readers or one writer; the
-- writer may also take the read side (downgrade), never the other way round.
-- rlock adds a holder record per holder: 'rlock:meta' for the writer,
-- 'rlock:meta:OWNER' for each reader (JSON; the 'rlock:' prefix is reserved, so
-- no owner token can name them; Redisson's scripts read no count from them).
-- Each fresh acquisition, of either side, takes a fencing token from the
-- counter shared with RFencedLock and the plain lock.
--
-- Writer preference (rlock's, not Redisson's): a waiting rlock writer records
-- its intent in the sorted set KEYS[4] (member = owner, score = server time in
-- ms when the intent lapses, ARGV[11] ahead, pushed forward by each attempt);
-- while a live intent exists, new rlock readers are busy (re-entries and a
-- writer's downgrade are not). A writer that takes the lock withdraws its own
-- intent. Redisson's readers do not look at it.
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- the second time it must answer as the first did, without counting twice.
--  * ARGV[3] = '1': the owner token was made by the client for this request, so
--    nobody else has it; finding its field means the first send was applied,
--    and the answer is "acquired" (code 1) with the hold as it is now.
--  * ARGV[3] = '0' (a token given by the user: re-entry is intended): applying
--    the request also SETs the latch KEYS[3] (one per request) to its answer
--    for ARGV[4] ms; a resend finds it and returns that answer unchanged.
--
-- KEYS[1] lock name   KEYS[2] fencing counter (redisson_lock_token:{NAME})
-- KEYS[3] this request's latch (rlock_acquire_latch:{NAME}:OP)
-- KEYS[4] the writers' intents (rlock_write_intent:{NAME}); all in NAME's slot
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] '1' the token is the client's own, '0' it was given
-- ARGV[4] latch lifetime in ms
-- ARGV[5] host  ARGV[6] pid  ARGV[7] command  ARGV[8] rlock version (the record)
-- ARGV[9] 'read' or 'write'
-- ARGV[10] '1': a writer that will wait: a busy answer records its intent
-- ARGV[11] how long an intent lives without a new attempt, in ms
-- ARGV[12] the reader lease keys' prefix: {NAME} (NAME when it holds a '{')
-- ARGV[13] the host's boot id  ARGV[14] the holder process's start time (clock
--         ticks after boot), for force-unlock --if-dead (either '' or absent: not recorded)
-- @deadline ARGV[15]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, count, fence, lease_ms}        acquired (fresh, or a resend of it)
--         (from the latch: a fifth element 1, as acquire.lua says)
--         {2, count, fence, lease_ms}        re-entered (or a resend of it)
--           fence: the token of this owner's hold on this side (a reader's
--           own, from its record); lease_ms: the lease of the level just taken
--           (reader) or of the hash (writer)
--         {0, holder, pttl, type, meta, mode, retry_ms}   busy:
--           holder   an owner token ('' when none can be read); a writer's
--                    token without ':write'
--           type     'hash', or a foreign key's type (then holder '', meta false)
--           meta     that holder's raw record ('' when over 8 KiB, false: none)
--           mode     the layout it is held in when not the side asked for:
--                    'write' / 'read'; 'exclusive' for a plain RLock hash (no
--                    'mode' field: busy even with the holder's own token, no
--                    re-entry across layouts); also 'write' when a reader is
--                    kept out of a free lock by a waiting writer (holder: that
--                    writer, pttl: its intent's time left); false otherwise
--           retry_ms a reader kept out by a writer's intent: attempt again
--                    within this (the intent lapses then unless renewed); 0
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--         error 'ERR rlock: owner token is empty or reserved: a reader's token cannot
--                 end in ':write' ...'   it would name a writer's field: nothing changed
--         error 'DAMAGED the key KEY is ...'   the fencing counter is another type,
--                 or a value INCR cannot raise: nothing changed (lib/damaged.lua;
--                 writers' intents of another type are left alone instead)
-- @include deadline.lua
local past_deadline = too_late(ARGV[15])
if past_deadline then
  return past_deadline
end

local name, fence_key, latch, intents = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local process_at = 13 -- lib/record.lua
local side, join, intent_ms, prefix = ARGV[9], ARGV[10] == '1', tonumber(ARGV[11]), ARGV[12]
local writer_meta = 'rlock:meta'
-- @include rw.lua
-- @include acquisition.lua
-- @include holders.lua
-- @include clock.lua
-- @include record.lua

local early = refused_side() or resent() or fence_damaged()
if early then
  return early
end
-- Writers' intents of another type are left alone (lib/damaged.lua): no
-- writer preference then, and no intent recorded.
intents = usable(intents, 'zset')

local field = side == 'write' and owner .. ':write' or owner
local meta_field = side == 'write' and writer_meta or 'rlock:meta:' .. owner

local now_ms = server_ms()

-- The fencing token of this owner's hold: the one its record holds, when that
-- is a whole number no larger than the counter (a reader's token cannot be
-- the counter: later readers move it); else the counter (a hold rlock did not
-- record, e.g. Redisson's), 0 when missing.
local function hold_fence()
  local counter = fence_now or 0 -- (read by fence_damaged)
  local meta = decode_record(redis.call('HGET', name, meta_field))
  local fence = meta and meta.fence
  if type(fence) == 'number' and fence >= 1 and fence <= counter and fence == math.floor(fence) then
    return fence
  end
  return counter
end

-- One more level for `field` (HINCRBY as Redisson does; a value that is not a
-- count was one level, so it becomes two).
local function one_more(f)
  if is_count(redis.call('HGET', name, f)) then
    return redis.call('HINCRBY', name, f, 1)
  end
  redis.call('HSET', name, f, 2)
  return 2
end

-- The owner fields of the hash (not 'mode', not rlock's records); nil for a
-- hash with more than 256 fields, which is not a lock.
local function owner_fields()
  if redis.call('HLEN', name) > 256 then
    return nil
  end
  local out = {}
  for _, f in ipairs(redis.call('HKEYS', name)) do
    if not reserved(f) then
      out[#out + 1] = f
    end
  end
  return out
end

-- Busy: who holds it (a writer if there is one, else the first reader).
local function busy(mode, retry_ms)
  local holder, meta = '', false
  local fields = owner_fields()
  if fields then
    local reader = nil
    for _, f in ipairs(fields) do
      if #f <= 1024 then
        if writer_field(f) and holder == '' then
          holder, meta = string.sub(f, 1, -7), raw_field(name, writer_meta)
        elseif not writer_field(f) and not reader then
          reader = f
        end
      end
    end
    if holder == '' and reader then
      holder, meta = reader, raw_field(name, 'rlock:meta:' .. reader)
    end
  end
  return {0, holder, redis.call('PTTL', name), 'hash', meta, mode or false, retry_ms or 0}
end

-- The earliest live writer intent {owner, lapses_at_ms}, after dropping lapsed ones.
local function live_intent()
  if not intents then
    return nil
  end
  redis.call('ZREMRANGEBYSCORE', intents, '-inf', now_ms)
  local first = redis.call('ZRANGE', intents, 0, 0, 'WITHSCORES')
  if #first == 0 then
    return nil
  end
  return {first[1], tonumber(first[2])}
end

-- A writer that will wait records (or renews) its intent; the key lives as
-- long as its newest intent.
local function busy_writer(mode)
  if join and intents then
    redis.call('ZADD', intents, now_ms + intent_ms, owner)
    redis.call('PEXPIRE', intents, intent_ms)
  end
  return busy(mode)
end

local kind = redis.call('TYPE', name)['ok']
if kind ~= 'none' and kind ~= 'hash' then
  if side == 'write' and join and intents then
    redis.call('ZADD', intents, now_ms + intent_ms, owner)
    redis.call('PEXPIRE', intents, intent_ms)
  end
  return {0, '', redis.call('PTTL', name), kind, false, false, 0}
end

local mode = false
if kind == 'hash' then
  mode = redis.call('HGET', name, 'mode')
  if not mode then
    -- A plain RLock (or RFairLock) hash: another layout, whoever asks.
    local holder = ''
    local fields = owner_fields()
    if fields and fields[1] and #fields[1] <= 1024 then
      holder = fields[1]
    end
    return {0, holder, redis.call('PTTL', name), 'hash', raw_field(name, writer_meta), 'exclusive', 0}
  end
  local fields = owner_fields()
  if fields and #fields == 0 then
    -- 'mode' and rlock's records but no holder (left by a script that does not
    -- know rlock's fields): nobody holds it.
    redis.call('DEL', name)
    kind, mode = 'none', false
  elseif mode ~= 'read' and mode ~= 'write' then
    -- Holders under a 'mode' no RReadWriteLock writes (forged, or another
    -- program's hash): not a read lock to join, nor one to take: busy, as
    -- another layout is, whoever asks (test_core_scripts_random, seed 34542).
    local holder = ''
    if fields and fields[1] and #fields[1] <= 1024 then
      holder = fields[1]
    end
    return {0, holder, redis.call('PTTL', name), 'hash', raw_field(name, writer_meta), 'exclusive', 0}
  end
end
if kind == 'none' then
  log_gone_holds(now_ms) -- the previous holds ended unseen: the history says how
end

if own_token and kind == 'hash' and redis.call('HEXISTS', name, field) == 1 then
  local count = levels(redis.call('HGET', name, field))
  local pttl = redis.call('PTTL', name)
  if side == 'read' then
    local key_pttl = redis.call('PTTL', level_key(owner, count))
    if key_pttl > 0 then
      pttl = key_pttl
    end
  end
  return {1, count, hold_fence(), pttl}
end

if side == 'write' then
  if kind == 'none' then
    local fence = new_fence(now_ms)
    redis.call('HSET', name, 'mode', 'write', field, 1, writer_meta, holder_record(5, now_ms, lease, fence))
    redis.call('PEXPIRE', name, lease)
    if intents then
      redis.call('ZREM', intents, owner)
    end
    return applied(1, 1, fence, lease)
  end
  if mode == 'write' and redis.call('HEXISTS', name, field) == 1 then
    local count = one_more(field)
    -- A re-entry lengthens the lease if it asks for more, never shortens it.
    local current = redis.call('PTTL', name)
    if current < lease then
      redis.call('PEXPIRE', name, lease)
      current = lease
    end
    if intents then
      redis.call('ZREM', intents, owner)
    end
    return applied(2, count, hold_fence(), current)
  end
  -- Readers (mode 'read'), or another writer: no upgrade from read to write.
  return busy_writer(mode == 'read' and 'read' or nil)
end

-- side == 'read'
local count = kind == 'hash' and redis.call('HGET', name, field)
if count then
  -- Re-entry (in 'read' mode, or as the writer's own downgraded reader).
  local level = one_more(field)
  redis.call('SET', level_key(owner, level), 1, 'PX', lease)
  if redis.call('PTTL', name) < lease then
    redis.call('PEXPIRE', name, lease)
  end
  return applied(2, level, hold_fence(), lease)
end

local downgrade = mode == 'write' and redis.call('HEXISTS', name, owner .. ':write') == 1
if mode == 'write' and not downgrade then
  return busy('write')
end
if not downgrade then
  -- A new reader waits behind a waiting writer.
  local intent = live_intent()
  if intent then
    local retry_ms = math.max(1, intent[2] - now_ms)
    if kind == 'none' then
      return {0, intent[1], retry_ms, 'hash', false, 'write', retry_ms}
    end
    return busy(nil, retry_ms)
  end
end

local fence = new_fence(now_ms)
if kind == 'none' then
  redis.call('HSET', name, 'mode', 'read')
end
redis.call('HSET', name, field, 1, meta_field, holder_record(5, now_ms, lease, fence))
redis.call('SET', level_key(owner, 1), 1, 'PX', lease)
if redis.call('PTTL', name) < lease then
  redis.call('PEXPIRE', name, lease)
end
return applied(1, 1, fence, lease)
