-- fair_leave.lua: a fair waiter that gives up (its deadline, a signal, an error)
-- leaves RFairLock's queue at once, as Redisson's acquireFailed does: out of the
-- queue redisson_lock_queue:{NAME}, its give-up time and rlock's record of it; the
-- Redisson waiters right behind it get its share of their give-up time taken off
-- (see lower_followers in fair_acquire.lua). When it was the head and the lock is
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
--
-- Returns {1}   it was queued and has left
--         {0}   it was not queued (its record, if any, is gone too)
--         error 'ERR rlock: owner token is empty or reserved'   nothing changed
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, queue, timeouts, waiters, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, window, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
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

-- ---- this script's own

local entries = redis.call('LRANGE', queue, 0, -1)
local position = nil
for i, entry in ipairs(entries) do
  if entry == owner then
    position = i
    break
  end
end
if position then
  -- Its followers, up to the next rlock waiter, as fair_acquire.lua lowers them.
  for i = position + 1, #entries do
    local entry = entries[i]
    if entry == owner or waiter_record(entry) then
      break
    end
    if redis.call('ZSCORE', timeouts, entry) then
      redis.call('ZINCRBY', timeouts, -window, entry)
    end
  end
  redis.call('LREM', queue, 0, owner)
end
redis.call('ZREM', timeouts, owner)
redis.call('HDEL', waiters, owner)

if position == 1 and redis.call('EXISTS', name) == 0 then
  local now = redis.call('TIME')
  local head = live_head(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
  if head then
    -- Best effort: a publish the user may not send (ACL) does not undo the leave.
    redis.pcall(publish, channel .. ':' .. head, '0')
  end
end
return {position and 1 or 0}
