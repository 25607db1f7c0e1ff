-- fair_acquire.lua: take the fair lock NAME for an owner (in queue order), or
-- re-enter it; a busy waiter joins the queue or keeps its place in it.
--
-- Redisson's RFairLock format: NAME is the RLock hash {owner token = reentry
-- count} with a PEXPIRE lease; the list redisson_lock_queue:{NAME} holds the
-- waiters in order and the sorted set redisson_lock_timeout:{NAME} each waiter's
-- give-up time (ms). Every RFairLock script first drops the stale heads (a head
-- whose give-up time has passed). The lock goes to an owner only when NAME is
-- absent and the queue is empty or the owner is its head; the new holder leaves
-- the queue. rlock adds 'rlock:meta' and a fencing token, as acquire.lua does.
--
-- rlock's waiters keep two give-up times. In the queue (the score Redisson's
-- scripts judge) the one Redisson gives a waiter in its place, with a wait of
-- ARGV[10]: the latest of those ahead (or now) plus ARGV[10]
-- (place_score in lib/fair_queue.lua), set again at every attempt (every
-- second), so Redisson's acquisitions ahead, which take their own wait off
-- every entry, do not make a live rlock waiter look stale to Redisson's sweep
-- (issue 30: a Redisson waiter behind it overtook it). And its own, now +
-- ARGV[10], in its record in rlock_waiters:{NAME} (KEYS[6]): owner -> JSON
-- {host, pid, command, since_ms, until_ms}, which Redisson never touches and
-- rlock's scripts judge it by: a waiter that dies stops counting within
-- ARGV[10] whatever it meant to wait. rlock's scripts give a live rlock head
-- its score back from until_ms rather than drop it, and a waiter of this
-- process that finds itself dropped anyway (by Redisson's scripts) goes back
-- where it was: behind the rlock waiters that came before it, ahead of
-- everyone else (only heads are ever dropped).
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- the second time it must answer as the first did, without counting twice.
--  * ARGV[3] = '1': the owner token was made by the client for this request, so
--    nobody else has it; finding it in the hash means the first send was applied.
--  * ARGV[3] = '0': applying an acquisition also SETs the latch KEYS[3] to its
--    answer for ARGV[4] ms; a resend finds it and returns that answer unchanged.
--  A busy answer writes no latch: sending it again only refreshes the waiter.
--
-- KEYS[1] lock name   KEYS[2] fencing counter   KEYS[3] this request's latch
--         (rlock_acquire_latch:{NAME}:OP)
-- KEYS[4] queue (redisson_lock_queue:{NAME})   KEYS[5] give-up times
--         (redisson_lock_timeout:{NAME})   KEYS[6] rlock's waiters (rlock_waiters:{NAME})
--         all in NAME's hash slot
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] '1' the token is the client's own, '0' it was given
-- ARGV[4] latch lifetime in ms
-- ARGV[5] host  ARGV[6] pid  ARGV[7] command  ARGV[8] rlock version (the records)
-- ARGV[9] '1' a waiter: join the queue when busy (or keep the place and refresh
--         the give-up time); '0' one attempt only: the queue is left as it is
-- ARGV[10] give-up window in ms: a waiter's own give-up time is now + this, and
--         its wait in Redisson's terms (place_score)
-- ARGV[11] the host's boot id  ARGV[12] the holder process's start time (clock
--         ticks after boot), for force-unlock --if-dead (either '' or absent: not recorded)
-- ARGV[13] '1': the process will renew the hold (rlock run): a re-entry makes
--         the record name it (lib/record.lua name_renewer); else, or absent, a
--         re-entry leaves the record as it is
-- @deadline ARGV[14]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, count, fence, lease_ms}        acquired (fresh, or a resend of it)
--         (from the latch: a fifth element 1, as acquire.lua says)
--         {2, count, fence, lease_ms}        re-entered (or a resend of it)
--         {0, holder, pttl, type, meta}      held by someone else, as acquire.lua
--         {0, head, -2, 'hash', record}      free, but it is another waiter's turn:
--                                            head = the first live waiter, record its
--                                            rlock_waiters record (false: Redisson's)
--         {0, holder, pttl, 'hash', meta, mode}  a Redisson read-write lock: busy
--         error 'ERR rlock: owner token is empty or reserved'   nothing changed
--         error 'DAMAGED the key KEY is ...'   the fencing counter, the queue, its
--                 give-up times or rlock's waiter records hold another type (or
--                 the counter a value INCR cannot raise): nothing changed
--                 (lib/damaged.lua)
-- @include deadline.lua
local past_deadline = too_late(ARGV[14])
if past_deadline then
  return past_deadline
end

local name, fence_key, latch = KEYS[1], KEYS[2], KEYS[3]
local queue, timeouts, waiters = KEYS[4], KEYS[5], KEYS[6]
local owner, lease, own_token, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local process_at = 11 -- lib/record.lua
local host, pid, command = ARGV[5], tonumber(ARGV[6]), ARGV[7]
local join, window = ARGV[9] == '1', tonumber(ARGV[10])
-- @include reserved.lua
-- @include exclusive.lua
-- @include fair_queue.lua

local early = refused(owner) or resent() or fence_damaged() or queue_damaged()
if early then
  return early
end

local now_ms = server_ms()

-- ---- this script's own

-- rlock waiters that stopped refreshing (killed) are forgotten wherever they are
-- in the queue, so the queue and `rlock status` show only live ones (at the head
-- they would be dropped anyway). A record that cannot be read is dropped alone:
-- the queue entry of that name is then treated as Redisson's.
local function forget_lapsed()
  if redis.call('HLEN', waiters) > 1024 then
    return -- not rlock's doing; the hash expires anyway
  end
  local all = redis.call('HGETALL', waiters)
  for i = 1, #all, 2 do
    local entry = all[i]
    local record = waiter_record(entry)
    if not record then
      redis.call('HDEL', waiters, entry)
    elseif record.until_ms <= now_ms then
      redis.call('HDEL', waiters, entry)
      if redis.call('ZSCORE', timeouts, entry) then
        redis.call('ZREM', timeouts, entry)
        redis.call('LREM', queue, 0, entry)
      end
    end
  end
end

-- This process's record, when an earlier attempt of this wait queued it and it
-- is still alive (same host and pid; another process may wait with a given token).
local mine = waiter_record(owner)
if not (join and mine and mine.until_ms > now_ms and mine.host == host and mine.pid == pid) then
  mine = nil
end
-- Refreshed before anything is dropped, so a score lowered by Redisson cannot
-- make this live waiter look stale to its own attempt.
if mine then
  local score = tonumber(redis.call('ZSCORE', timeouts, owner))
  mine.until_ms = now_ms + window
  if not score then
    -- Queued by an earlier attempt and dropped since as a stale head (by Redisson's
    -- scripts, after a Redisson acquisition lowered its score): back where it was,
    -- behind the rlock waiters that came before it, else at the head (only heads
    -- are ever dropped, so everyone else in the queue came after it).
    local after = nil
    for _, entry in ipairs(redis.call('LRANGE', queue, 0, -1)) do
      local other = waiter_record(entry)
      if entry ~= owner and other and type(other.since_ms) == 'number' and type(mine.since_ms) == 'number' and
          other.since_ms <= mine.since_ms then
        after = entry
      end
    end
    if after then
      redis.call('LINSERT', queue, 'AFTER', after, owner)
    else
      redis.call('LPUSH', queue, owner)
    end
  end
  redis.call('ZADD', timeouts, string.format('%.0f', place_score(owner, now_ms, window)), owner)
  redis.call('HSET', waiters, owner, encode_waiter(mine))
end
forget_lapsed()
local head, head_record = live_head(now_ms)

-- Joins the queue at its end, or keeps the place in it with new give-up times
-- (its place's, place_score, and its own, until_ms).
local function wait_in_queue()
  local until_ms = now_ms + window
  local record = mine or { since_ms = now_ms }
  if not redis.call('ZSCORE', timeouts, owner) then
    redis.call('RPUSH', queue, owner)
  end
  redis.call('ZADD', timeouts, string.format('%.0f', place_score(owner, now_ms, window)), owner)
  redis.call('HSET', waiters, owner, encode_waiter({
    host = host, pid = pid, command = command, since_ms = record.since_ms, until_ms = until_ms,
  }))
  -- Every record's until_ms is at most now + window: the hash never outlives them.
  redis.call('PEXPIRE', waiters, window)
end

local kind = redis.call('TYPE', name)['ok']

if kind == 'none' and (head == nil or head == owner) then
  if head == owner then
    redis.call('LPOP', queue)
    redis.call('ZREM', timeouts, owner)
    lower_redisson_followers(0, window)
  end
  redis.call('HDEL', waiters, owner)
  expire_queue(now_ms)
  return take(now_ms)
end

local answer
if kind == 'none' then
  local record = false
  if head_record then
    record = redis.call('HGET', waiters, head)
  end
  answer = {0, head, -2, 'hash', record}
elseif kind ~= 'hash' then
  answer = {0, '', redis.call('PTTL', name), kind, false}
else
  local taken
  answer, taken = attempt_held(ARGV[13] == '1')
  if taken then
    return answer
  end
end

if join then
  wait_in_queue()
end
expire_queue(now_ms)
return answer
