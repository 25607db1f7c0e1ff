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
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] '1' the token is the client's own, '0' it was given
-- ARGV[4] latch lifetime in ms
-- ARGV[5] host  ARGV[6] pid  ARGV[7] command  ARGV[8] rlock version (the record)
--
-- Returns {1, count, fence, lease_ms}        acquired (fresh, or a resend of it)
--         {2, count, fence, lease_ms}        re-entered (or a resend of it)
--         {0, holder, pttl, type, meta}      held by someone else (type 'hash' or
--                                            a foreign type such as 'string'; holder
--                                            '' when no owner field can be read; meta
--                                            the raw 'rlock:meta', '' when longer than
--                                            8 KiB, false when absent)
--         {0, head, -2, 'hash', record}      free, but fair waiters are queued: head
--                                            is the first live one, record its
--                                            rlock_waiters record (false: Redisson's)
--         {0, holder, pttl, 'hash', meta, mode}  NAME is a Redisson read-write lock
--                                            (mode 'read' or 'write'): busy for a
--                                            plain acquire, even with a reader's own
--                                            token (no re-entry across layouts)
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, fence_key, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters = KEYS[4], KEYS[5], KEYS[6]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local meta_field = 'rlock:meta'

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

-- Applies an answer: remembered in the latch when the token was given.
local function applied(code, count, fence, lease_ms)
  if not own_token then
    redis.call('SET', latch, string.format('%d %d %.0f %d', code, count, fence, lease_ms), 'PX', latch_ms)
  end
  return {code, count, fence, lease_ms}
end

-- The fencing token of the current hold: the counter cannot move while the
-- lock is held (only a fresh acquisition takes a token), 0 when missing. The
-- record's 'fence' is never believed.
local function current_fence()
  return tonumber(redis.call('GET', fence_key)) or 0
end

-- Busy: who holds it. A hash with more than 256 fields is not a lock: no holder
-- is read from it. `mode`: Redisson's read-write 'mode' value, or nil.
local function busy(mode)
  local holder, meta = '', false
  if redis.call('HLEN', name) <= 256 then
    for _, field in ipairs(redis.call('HKEYS', name)) do
      if holder == '' and #field <= 1024 and not reserved(field) then
        holder = field
      end
    end
    if redis.call('HEXISTS', name, meta_field) == 1 then
      meta = ''
      if redis.call('HSTRLEN', name, meta_field) <= 8192 then
        meta = redis.call('HGET', name, meta_field)
      end
    end
  end
  return {0, holder, redis.call('PTTL', name), 'hash', meta, mode}
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
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  if queue then
    local head, record = live_head(now_ms)
    if head and head ~= owner then
      return {0, head, -2, 'hash', record and redis.call('HGET', waiters, head) or false}
    end
  end
  -- A missing counter (first use, or a server that lost its data in a restart
  -- without persistence) starts at the server's clock in ms, so tokens stay
  -- above every token handed out before (unless more than one acquisition a
  -- millisecond was sustained). An existing counter (also Redisson's
  -- RFencedLock's) just counts on.
  local fence
  if redis.call('EXISTS', fence_key) == 0 then
    fence = now_ms
    redis.call('SET', fence_key, fence)
  else
    fence = redis.call('INCR', fence_key)
  end
  local meta = cjson.encode({
    host = ARGV[5], pid = tonumber(ARGV[6]), command = ARGV[7], version = ARGV[8],
    acquired_at_ms = now_ms, ttl_ms = lease, fence = fence,
  })
  redis.call('HSET', name, owner, 1, meta_field, meta)
  redis.call('PEXPIRE', name, lease)
  return applied(1, 1, fence, lease)
end

if kind ~= 'hash' then
  return {0, '', redis.call('PTTL', name), kind, false}
end

-- A Redisson read-write lock (its 'mode' field) is never a plain lock, whoever asks.
local rw_mode = redis.call('HGET', name, 'mode')
if rw_mode then
  return busy(#rw_mode <= 16 and rw_mode or '?')
end

local count = redis.call('HGET', name, owner)
if count then
  if own_token then
    return {1, math.floor(tonumber(count) or 1), current_fence(), redis.call('PTTL', name)}
  end
  -- As Redisson does, HINCRBY; a count that is not a positive integer (the hash
  -- is data) counts as one level.
  if #count <= 15 and string.match(count, '^[1-9]%d*$') then
    count = redis.call('HINCRBY', name, owner, 1)
  else
    count = 2
    redis.call('HSET', name, owner, count)
  end
  -- A re-entry lengthens the lease if it asks for more, never shortens it: the
  -- outer level keeps renewing at its own pace.
  local current = redis.call('PTTL', name)
  if current < lease then
    redis.call('PEXPIRE', name, lease)
    current = lease
  end
  return applied(2, count, current_fence(), current)
end

return busy(nil)
