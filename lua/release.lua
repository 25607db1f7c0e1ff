-- release.lua: undo one level of an owner's hold on NAME, or every level.
-- When the count reaches zero the lock is deleted and '0' is published on the
-- release channel, exactly as Redisson's unlock does, so Redisson and rlock
-- waiters wake each other. When fair waiters are queued (RFairLock's queue has a
-- live head once the stale heads are dropped; see fair_acquire.lua), '0' goes to
-- the head's own channel (release channel .. ':' .. head) only, as Redisson's
-- RFairLock unlock does: the head is woken, not everyone.
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
-- KEYS[7] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing (Redlock undoing a round whose answer
--         from this master was lost)
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
-- ARGV[5] (optional) '1': a release that frees the lock answers {0, channel}
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
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters, acquisition = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
end

local stored = tonumber(redis.call('GET', latch))
if stored then
  return {stored}
end

if acquisition then
  local acquired = redis.call('GET', acquisition)
  local code = acquired and string.match(acquired, '^(%d) ')
  if code ~= '1' and code ~= '2' then
    return {-1}
  end
  redis.call('DEL', acquisition)
end

-- ---- RFairLock's queue (the same functions in acquire.lua, release.lua,
-- force_unlock.lua and fair_leave.lua)

-- The rlock_waiters record of a queue entry (a table with a numeric until_ms), or
-- nil for a Redisson waiter (or a record that cannot be read).
local function waiter_record(entry)
  if not waiters then
    return nil
  end
  local raw = redis.call('HGET', waiters, entry)
  if not raw or #raw > 8192 then
    return nil
  end
  local ok, record = pcall(cjson.decode, raw)
  if ok and type(record) == 'table' and type(record.until_ms) == 'number' then
    return record
  end
  return nil
end

-- The first live entry of the queue (nil: none), how many stale ones precede it,
-- and its rlock record. Stale: an rlock waiter whose own until_ms has passed, or
-- another whose score has (one without a score never is, as in Redisson).
local function survey(now_ms)
  local i = 0
  while true do
    local entry = redis.call('LINDEX', queue, i)
    if not entry then
      return nil, i, nil
    end
    local record = waiter_record(entry)
    if record then
      if record.until_ms > now_ms then
        return entry, i, record
      end
    else
      local score = tonumber(redis.call('ZSCORE', timeouts, entry))
      if not score or score > now_ms then
        return entry, i, nil
      end
    end
    i = i + 1
  end
end

-- Drops the `stale` first entries, and gives a live rlock head the score its
-- record says (a Redisson acquisition may have lowered it).
local function settle(head, stale, record)
  for _ = 1, stale do
    local entry = redis.call('LPOP', queue)
    redis.call('ZREM', timeouts, entry)
    if waiters then
      redis.call('HDEL', waiters, entry)
    end
  end
  if record then
    local score = tonumber(redis.call('ZSCORE', timeouts, head))
    if not score or score < record.until_ms then
      redis.call('ZADD', timeouts, string.format('%.0f', record.until_ms), head)
    end
  end
end

-- The live head at now_ms after dropping the stale ones, and its rlock record.
local function live_head(now_ms)
  local head, stale, record = survey(now_ms)
  settle(head, stale, record)
  return head, record
end

-- ---- the lock

local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {-1}
end
if kind ~= 'hash' then
  return {-3, kind}
end
local rw_mode = redis.call('HGET', name, 'mode')
if rw_mode then
  return {-4, #rw_mode <= 16 and rw_mode or '?'}
end

local count = redis.call('HGET', name, owner)
if not count then
  -- A hash with more than 256 fields is not a lock: no holder is read from it.
  if redis.call('HLEN', name) <= 256 then
    for _, field in ipairs(redis.call('HKEYS', name)) do
      if #field <= 1024 and not reserved(field) then
        return {-2, field}
      end
    end
  end
  return {-2, ''}
end

-- As Redisson does, HINCRBY -1; a count that is not a positive integer (the
-- hash is data) counts as one level.
local left = 0
if not all and #count <= 15 and string.match(count, '^[1-9]%d*$') then
  left = tonumber(count) - 1
end
local published = nil
if left > 0 then
  left = redis.call('HINCRBY', name, owner, -1)
else
  -- Publish first: if the user may not publish (an ACL without the channel), the
  -- script fails before changing anything (the queue is only read until then).
  -- Subscribers see the message only after the script has run, so they never
  -- find the lock still there.
  published = channel
  local head, stale, record = nil, 0, nil
  if queue then
    local now = redis.call('TIME')
    head, stale, record = survey(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
    if head then
      published = channel .. ':' .. head
    end
  end
  redis.call(publish, published, '0')
  if queue then
    settle(head, stale, record)
  end
  redis.call('DEL', name)
end
redis.call('SET', latch, left, 'PX', latch_ms)
if published and ARGV[5] == '1' then
  return {left, published}
end
return {left}
