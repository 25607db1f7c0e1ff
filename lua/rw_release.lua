-- rw_release.lua: undo one level of an owner's read or write hold on the
-- read-write lock NAME (Redisson's RReadWriteLock layout, see rw_acquire.lua),
-- or every level.
--
-- As Redisson's read unlock: a reader's level key goes with its level; when
-- the reader's last level goes, its field and record go, and the hash's lease
-- becomes the longest lease left among the readers' level keys; when no
-- reader's key is alive (and no writer holds it) the hash is deleted and '0'
-- is published on redisson_rwlock:{NAME}.
-- As Redisson's write unlock: when the writer's last level goes, its field and
-- record go; the hash is deleted if nobody else is in it, else it becomes a
-- read lock of the writer's own readers (downgrade) with their lease; '1' is
-- published in both cases (Redisson publishes only on the delete: readers may
-- join after a downgrade too, so rlock wakes them then as well).
--
-- A request may arrive twice (its reply was lost and the client sent it again).
-- As in Redisson's unlock, applying it SETs the latch KEYS[3] (one per request)
-- to its answer for ARGV[4] ms, and a resend finds the latch and returns that
-- answer unchanged.
--
-- KEYS[1] lock name   KEYS[2] redisson_rwlock:{NAME}
-- KEYS[3] this request's latch: redisson_unlock_latch:{NAME}:OP (NAME's hash slot)
-- KEYS[4] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
-- ARGV[5] 'read' or 'write'
-- ARGV[6] the reader lease keys' prefix: {NAME} (NAME when it holds a '{')
--
-- Returns {n}            released; n levels of this side are still held by the
--                        owner (0: this side of its hold is gone)
--         {-1}           not held: no such lock, or (a reader) only other
--                        readers are in it
--         {-2, holder}   held by another owner: a writer (token without
--                        ':write'), or readers when a writer asks
--         {-3, type}     the key is not a lock hash (foreign): never touched
--         {-4, layout}   held in another layout: 'exclusive' (a plain RLock hash,
--                        no 'mode'), or the owner holds the other side ('read'
--                        or 'write'): never touched
--         error 'ERR rlock: owner token is empty or reserved'   as rw_acquire.lua
local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]
local side, prefix = ARGV[5], ARGV[6]

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
local function writer_field(field)
  return #field > 6 and string.sub(field, -6) == ':write'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
end
if side == 'read' and writer_field(owner) then
  return redis.error_reply("ERR rlock: owner token is empty or reserved: a reader's token cannot end in ':write' (a writer's field)")
end

local stored = tonumber(redis.call('GET', latch))
if stored then
  return {stored}
end

if KEYS[4] then
  local acquired = redis.call('GET', KEYS[4])
  local code = acquired and string.match(acquired, '^(%d) ')
  if code ~= '1' and code ~= '2' then
    return {-1}
  end
  redis.call('DEL', KEYS[4])
end

local field = side == 'write' and owner .. ':write' or owner
local other_field = side == 'write' and owner or owner .. ':write'

local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {-1}
end
if kind ~= 'hash' then
  return {-3, kind}
end
local mode = redis.call('HGET', name, 'mode')
if not mode then
  return {-4, 'exclusive'}
end

local function level_key(who, i)
  return prefix .. ':' .. who .. ':rwlock_timeout:' .. i
end
local function is_count(value)
  return value and #value <= 15 and string.match(value, '^[1-9]%d*$') ~= nil
end

-- Not ours: who is in it instead.
local function not_held()
  if redis.call('HEXISTS', name, other_field) == 1 then
    return {-4, side == 'write' and 'read' or 'write'}
  end
  if redis.call('HLEN', name) <= 256 then
    local reader = nil
    for _, f in ipairs(redis.call('HKEYS', name)) do
      if #f <= 1024 and not reserved(f) then
        if writer_field(f) then
          return {-2, string.sub(f, 1, -7)}
        end
        reader = reader or f
      end
    end
    if reader and side == 'write' then
      return {-2, reader}
    end
  end
  return {-1}
end

local count = redis.call('HGET', name, field)
if not count then
  return not_held()
end

-- The longest lease left among the readers' level keys (-3 when none is
-- alive), as Redisson's read unlock computes it, counting `owner` with
-- `owner_levels` levels (what this release leaves of it); nil when the hash is
-- too big to be a lock or holds more levels than are worth reading (10000).
local function readers_lease(owner_levels)
  if redis.call('HLEN', name) > 256 then
    return nil
  end
  local longest, budget = -3, 10000
  for _, f in ipairs(redis.call('HKEYS', name)) do
    local value = redis.call('HGET', name, f)
    if not reserved(f) and not writer_field(f) and is_count(value) then
      local n = tonumber(value)
      if f == owner and side == 'read' then
        n = owner_levels
      end
      if n > budget then
        return nil
      end
      budget = budget - n
      for i = n, 1, -1 do
        longest = math.max(longest, redis.call('PTTL', level_key(f, i)))
      end
    end
  end
  return longest
end

local held = is_count(count) and tonumber(count) or 1
local left = all and 0 or held - 1

-- Every change comes after the PUBLISH (if the user may not publish, an ACL
-- without the channel, the script fails before changing anything);
-- subscribers see the message only after the script has run.
if side == 'write' then
  if left > 0 then
    redis.call('HINCRBY', name, field, -1)
  else
    local lease = readers_lease(0)
    redis.call(publish, channel, '1')
    redis.call('HDEL', name, field, 'rlock:meta')
    if lease and lease <= 0 then
      redis.call('DEL', name)
    else
      -- The writer's own readers stay (downgrade): a read lock with their lease.
      redis.call('HSET', name, 'mode', 'read')
      if lease then
        redis.call('PEXPIRE', name, lease)
      end
    end
  end
  redis.call('SET', latch, left, 'PX', latch_ms)
  return {left}
end

-- side == 'read'. In the writer's hash (a downgrade) the lease is the
-- writer's: a reader never shortens it, and the hash stays.
local lease = nil
if mode ~= 'write' then
  lease = readers_lease(left)
  if lease and lease <= 0 then
    redis.call(publish, channel, '0')
  end
end
if left > 0 then
  redis.call('HINCRBY', name, field, -1)
  redis.call('DEL', level_key(owner, held))
else
  redis.call('HDEL', name, field, 'rlock:meta:' .. owner)
  for i = math.min(held, 10000), 1, -1 do
    redis.call('DEL', level_key(owner, i))
  end
end
if lease and lease > 0 then
  redis.call('PEXPIRE', name, lease)
elseif lease then
  redis.call('DEL', name)
end
redis.call('SET', latch, left, 'PX', latch_ms)
return {left}
