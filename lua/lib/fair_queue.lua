-- lib/fair_queue.lua: RFairLock's queue (see fair_acquire.lua), as acquire.lua,
-- release.lua, force_unlock.lua, fair_acquire.lua and fair_leave.lua read and
-- tidy it. Uses the script's locals queue (redisson_lock_queue:{NAME}; nil: the
-- queue is not looked at), timeouts (redisson_lock_timeout:{NAME}) and waiters
-- (rlock_waiters:{NAME}; nil: every waiter's score is taken as it is).
-- @include clock.lua
-- @include record.lua
-- @include turns.lua
-- @include damaged.lua

-- The queue as a plain lock's acquisition, release or force-unlock may use it:
-- a list or give-up times of another type (lib/damaged.lua) leave the queue
-- alone (queue nil: not looked at), a waiters' hash of another type leaves
-- that alone (every waiter's score is taken as it is). No queue, nothing to
-- check: the others are read only for its entries. The fair scripts refuse
-- such keys instead (they must queue their waiter).
local function queue_or_nothing()
  local kind = queue and redis.call('TYPE', queue)['ok']
  if not kind or kind == 'none' then
    return
  end
  if kind ~= 'list' or not usable(timeouts, 'zset') then
    queue = nil
    return
  end
  waiters = usable(waiters, 'hash')
end

-- The fair scripts' own check, before their first write: the DAMAGED answer
-- when the queue, its give-up times or rlock's waiter records hold another
-- type; nil when they fit.
local function queue_damaged()
  return unfit({{queue, 'list', 'a fair queue (a list)'}, {timeouts, 'zset', "a fair queue's give-up times (a sorted set)"},
                {waiters, 'hash', "rlock's fair waiters (a hash)"}})
end

-- The rlock_waiters record of a queue entry (a table with a numeric until_ms), or
-- nil for a Redisson waiter (or a record that cannot be read).
local function waiter_record(entry)
  if not waiters then
    return nil
  end
  local record = decode_record(redis.call('HGET', waiters, entry))
  -- (a time the scripts can write back: not NaN, nor beyond the year 5000)
  if record and type(record.until_ms) == 'number' and record.until_ms >= 0 and record.until_ms < 1e14 then
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

-- An rlock waiter's record as stored: JSON (an older rlock's list of followers,
-- 'behind', is dropped).
local function encode_waiter(record)
  record.behind = nil
  return cjson.encode(record)
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

-- The give-up time an rlock waiter's queue entry carries (issue 30): the one
-- Redisson gives a waiter of `window` in its place (Redisson's join: the
-- latest give-up time ahead, or the lock's end, plus the waiter's wait), never
-- less than now_ms + window. Redisson's acquisitions ahead take their wait
-- off every entry, and each such wait is in the time of the entry that
-- waits it, so this entry goes stale to Redisson's sweep no sooner than a
-- Redisson waiter would in its place, and its waiter puts it back every
-- second. Its own give-up time (until_ms in its record, now + window) is what
-- rlock's scripts judge it by: a dead waiter stops counting within `window`.
local function place_score(entry, now_ms, window)
  local latest = now_ms
  for _, e in ipairs(redis.call('LRANGE', queue, 0, 1023)) do
    if e == entry then
      break
    end
    local score = tonumber(redis.call('ZSCORE', timeouts, e))
    if score and score > latest then
      latest = score
    end
  end
  return latest + window
end

-- What an rlock waiter that leaves the queue (it took the lock, or gave up)
-- takes off the Redisson waiters behind it, as Redisson's own taker or leaver
-- takes its wait off them: `window`, its share in their give-up times (they
-- counted theirs from its, place_score). rlock's waiters set their own.
-- `from`: the 0-based index of the first of them once the leaver is gone.
local function lower_redisson_followers(from, window)
  for _, entry in ipairs(redis.call('LRANGE', queue, from, 1023)) do
    if not waiter_record(entry) and redis.call('ZSCORE', timeouts, entry) then
      redis.call('ZINCRBY', timeouts, -window, entry)
    end
  end
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
  -- (a score is data: at most 30 days, as for Redisson's entries)
  local ttl = string.format('%.0f', math.min(latest - now_ms + 2000, 2592000000))
  redis.call('PEXPIRE', queue, ttl)
  redis.call('PEXPIRE', timeouts, ttl)
end

-- Drops the `stale` first entries, and gives a live rlock head at least the
-- score its record says (a Redisson acquisition may have lowered it; a head
-- has nobody ahead, so its own give-up time is its place's).
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

-- Wakes the waiters of a lock that is being freed: when fair waiters are
-- queued, '0' on the live head's own channel only (channel .. ':' .. head), as
-- Redisson's RFairLock does, then the stale heads are dropped; otherwise the
-- plain waiters, as lib/turns.lua's wake_plain does (`turns`: their set,
-- rlock_turns:{NAME}; nil: not kept). With neither key there (the usual
-- case), one command says so and '0' goes on the release channel. `publish`:
-- 'PUBLISH' or 'SPUBLISH'. The messages go out first: if the user may not
-- publish (an ACL without the channel), the script fails before changing
-- anything (the queue is only read until then). Subscribers see them only
-- after the script has run. Returns the channel '0' went to (the release
-- channel when a plain waiter was named: a resend wakes everyone).
local function wake(publish, channel, turns)
  if (not queue and not turns) or redis.call('EXISTS', queue or turns, turns or queue) == 0 then
    redis.call(publish, channel, '0')
    return channel
  end
  -- Keys of another type are left alone (lib/damaged.lua): checked here, once
  -- one of them exists, so the usual release pays nothing for it.
  queue_or_nothing()
  turns = usable(turns, 'zset')
  local now_ms = server_ms()
  local head, stale, record = nil, 0, nil
  if queue then
    head, stale, record = survey(now_ms)
    if head then
      redis.call(publish, channel .. ':' .. head, '0')
      settle(head, stale, record)
      return channel .. ':' .. head
    end
  end
  wake_plain(turns, publish, channel, now_ms)
  settle(nil, stale, nil)
  return channel
end
