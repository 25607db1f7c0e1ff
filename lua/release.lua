-- release.lua: undo one level of an owner's hold on NAME, or every level.
-- When the count reaches zero the lock is deleted and '0' is published on the
-- release channel, exactly as Redisson's unlock does, so Redisson and rlock
-- waiters wake each other.
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
--         times (redisson_lock_timeout:{NAME})
-- KEYS[6] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing (Redlock undoing a round whose answer
--         from this master was lost)
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
--
-- Returns {n}            released; n levels are still held by the owner (0: freed)
--         {-1}           no such lock
--         {-2, holder}   held by another owner ('' when no owner field can be read)
--         {-3, type}     the key is not a lock hash (foreign): never touched
--         {-4, mode}     a Redisson read-write lock (mode 'read'/'write'): not
--                        released by a plain release, whoever asks
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
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

if KEYS[6] then
  local acquired = redis.call('GET', KEYS[6])
  local code = acquired and string.match(acquired, '^(%d) ')
  if code ~= '1' and code ~= '2' then
    return {-1}
  end
  redis.call('DEL', KEYS[6])
end

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
if left > 0 then
  left = redis.call('HINCRBY', name, owner, -1)
else
  -- Publish first: if the user may not publish (an ACL without the channel), the
  -- script fails before changing anything. Subscribers see the message only after
  -- the script has run, so they never find the lock still there.
  redis.call(publish, channel, '0')
  redis.call('DEL', name)
end
redis.call('SET', latch, left, 'PX', latch_ms)
return {left}
