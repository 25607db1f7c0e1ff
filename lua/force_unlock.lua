-- force_unlock.lua: remove NAME whoever holds it, whatever its type, and wake
-- waiters (rlock's and Redisson's) with '0' on the release channel, or, when fair
-- waiters are queued (RFairLock's queue has a live head once the stale heads are
-- dropped; see fair_acquire.lua), on the head's own channel only (release channel
-- .. ':' .. head), as Redisson's RFairLock forceUnlock does. The queue stays.
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
-- ARGV[1] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[2] latch lifetime in ms
-- ARGV[3] (optional) '1': a removal answers {1, type, channel}
--
-- Returns {1, type}   removed a key of that type (or a resend of that removal)
--         {1, type, channel}  removed, with ARGV[3] = '1': the channel '0' was
--                     published on (a resend of it answers {1, type})
--         {0}         there was nothing to remove
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters = KEYS[4], KEYS[5], KEYS[6]
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

local stored = redis.call('GET', latch)
if stored then
  return {1, stored}
end
local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {0}
end
-- Publish first, so an ACL denial changes nothing (the queue is only read until then).
local published, head, stale, record = channel, nil, 0, nil
local rw_channel, permits, permit_channel, permit_records = KEYS[7], KEYS[8], KEYS[9], KEYS[10]
if rw_channel and kind == 'hash' and redis.call('HEXISTS', name, 'mode') == 1 then
  redis.call(ARGV[1], rw_channel, '0')
  redis.call('DEL', name)
  redis.call('SET', latch, kind, 'PX', ARGV[2])
  return ARGV[3] == '1' and {1, kind, rw_channel} or {1, kind}
end
if permits and kind == 'string' and redis.call('TYPE', permits)['ok'] == 'zset' then
  local out = redis.call('ZCARD', permits)
  redis.call(ARGV[1], permit_channel, tostring(math.max(out, 1)))
  redis.call('DEL', name, permits, permit_records)
  redis.call('SET', latch, kind, 'PX', ARGV[2])
  return ARGV[3] == '1' and {1, kind, permit_channel} or {1, kind}
end
if queue then
  local now = redis.call('TIME')
  head, stale, record = survey(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
  if head then
    published = channel .. ':' .. head
  end
end
redis.call(ARGV[1], published, '0')
if queue then
  settle(head, stale, record)
end
redis.call('DEL', name)
redis.call('SET', latch, kind, 'PX', ARGV[2])
if ARGV[3] == '1' then
  return {1, kind, published}
end
return {1, kind}
