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

-- An rlock waiter's record as stored: JSON, without the followers it remembers
-- (see keep_followers) when they would make it too long to be read back.
local function encode_waiter(record)
  local encoded = cjson.encode(record)
  if #encoded > 7168 then
    record.behind = nil
    encoded = cjson.encode(record)
  end
  return encoded
end

-- The queue's entries, and where `entry` is among them (nil: not queued).
local function queue_position(entry)
  local entries = redis.call('LRANGE', queue, 0, -1)
  for i, e in ipairs(entries) do
    if e == entry then
      return entries, i
    end
  end
  return entries, nil
end

-- The Redisson waiters right behind the rlock waiter `entry` (up to the next
-- rlock waiter, at most 16 of them) counted their give-up times from its score
-- (Redisson's join: the score of the last entry plus the joiner's wait). rlock's
-- score is its own (now + its window, refreshed at each attempt) and nothing of
-- the entries ahead of it, so a decrease that an acquisition or a give-up ahead of
-- it made to every score behind (Redisson's scripts take the taker's or leaver's
-- wait off all of them) is not theirs either: rlock takes it off its own score
-- (restored from until_ms), and gives it back to them here. `lowered`: how much
-- its own score was found lowered (0: not). The record remembers the time each
-- follower should have (record.behind), so one whose decrease was not seen on
-- the rlock waiter's score (dropped as a stale head before it could look) gets
-- it back too; an entry never loses time here, only gets it back. Updates
-- record.behind; the caller stores the record. Sending a script twice is
-- harmless: the second time nothing is lowered any more.
local function keep_followers(entry, record, lowered)
  local known = type(record.behind) == 'table' and record.behind or {}
  local kept = {}
  local entries, at = queue_position(entry)
  if at then
    for i = at + 1, math.min(#entries, at + 16) do
      local e = entries[i]
      if waiter_record(e) then
        break
      end
      local score = tonumber(redis.call('ZSCORE', timeouts, e))
      if score then
        local target = score + lowered
        local remembered = tonumber(known[e])
        if remembered and remembered > target then
          target = remembered
        end
        if target > score then
          redis.call('ZADD', timeouts, string.format('%.0f', target), e)
        end
        if #e <= 128 then
          kept[e] = target
        end
      end
    end
  end
  record.behind = kept
end

-- Lets the queue's keys expire once nothing in them can still be waiting
-- (Redisson never sets an expiry, so a dead waiter's entry stayed for ever):
-- while every entry is an rlock waiter's, both keys live until the latest
-- give-up time among them (a record's until_ms, or a score) and 2 s more; a
-- live waiter pushes that on at each attempt. An entry of Redisson's makes the
-- keys Redisson's to keep: rlock introduces no expiry then, and one it set
-- earlier is pushed 30 days out (Redisson's waiters never renew it). Only
-- rlock's fair scripts call it (they pass rlock_waiters:{NAME}).
local function expire_queue(now_ms)
  if not waiters then
    return
  end
  local latest, redisson = now_ms, false
  for _, entry in ipairs(redis.call('LRANGE', queue, 0, 1023)) do
    local record = waiter_record(entry)
    if record then
      latest = math.max(latest, record.until_ms)
    else
      redisson = true
    end
    local score = tonumber(redis.call('ZSCORE', timeouts, entry))
    if score then
      latest = math.max(latest, score)
    end
  end
  if redisson then
    if redis.call('PTTL', queue) >= 0 or redis.call('PTTL', timeouts) >= 0 then
      redis.call('PEXPIRE', queue, 2592000000)
      redis.call('PEXPIRE', timeouts, 2592000000)
    end
    return
  end
  local ttl = string.format('%.0f', latest - now_ms + 2000)
  redis.call('PEXPIRE', queue, ttl)
  redis.call('PEXPIRE', timeouts, ttl)
end

-- Drops the `stale` first entries, and gives a live rlock head the score its
-- record says (a Redisson acquisition may have lowered it), and its Redisson
-- followers what was taken off with it (keep_followers).
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
      if score then
        keep_followers(head, record, record.until_ms - score)
        redis.call('HSET', waiters, head, encode_waiter(record))
      end
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
