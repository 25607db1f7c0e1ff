-- lib/fair_queue.lua: RFairLock's queue (see fair_acquire.lua), as acquire.lua,
-- release.lua, force_unlock.lua, fair_acquire.lua and fair_leave.lua read and
-- tidy it. Uses the script's locals queue (redisson_lock_queue:{NAME}; nil: the
-- queue is not looked at), timeouts (redisson_lock_timeout:{NAME}) and waiters
-- (rlock_waiters:{NAME}; nil: every waiter's score is taken as it is).
-- @include clock.lua
-- @include record.lua

-- The rlock_waiters record of a queue entry (a table with a numeric until_ms), or
-- nil for a Redisson waiter (or a record that cannot be read).
local function waiter_record(entry)
  if not waiters then
    return nil
  end
  local record = decode_record(redis.call('HGET', waiters, entry))
  if record and type(record.until_ms) == 'number' then
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

-- Wakes the waiters of a lock that is being freed: '0' on `channel` (the release
-- channel), or, when fair waiters are queued, on the live head's own channel
-- only (channel .. ':' .. head), as Redisson's RFairLock does; then drops the
-- stale heads. `publish`: 'PUBLISH' or 'SPUBLISH'. The message goes out first:
-- if the user may not publish (an ACL without the channel), the script fails
-- before changing anything (the queue is only read until then). Subscribers see
-- it only after the script has run. Returns the channel it went to.
local function wake(publish, channel)
  local published, head, stale, record = channel, nil, 0, nil
  if queue then
    head, stale, record = survey(server_ms())
    if head then
      published = channel .. ':' .. head
    end
  end
  redis.call(publish, published, '0')
  if queue then
    settle(head, stale, record)
  end
  return published
end
