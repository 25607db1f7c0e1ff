-- rw_renew.lua: extend the lease of an owner's read or write hold on the
-- read-write lock NAME (Redisson's RReadWriteLock layout, see rw_acquire.lua)
-- if, and only if, the owner holds that side. Never creates a hold that has
-- gone. With one level held the lease becomes exactly the new one (it may
-- shorten it: --hold-min relies on that); while re-entered it is only ever
-- lengthened. Sending it twice gives the same lease.
--
-- Writer: the hash's PEXPIRE, as renew.lua does for a plain lock.
-- Reader: every level key of the owner gets the lease (a level key that has
-- gone while the field stayed is set again: the field proves the hash has been
-- a read lock, or this owner's write lock, all along, so no writer got in), as
-- Redisson's read-lock renewal does; then the hash's lease becomes the longest
-- of all readers' level keys (in the writer's hash, a downgrade, it is only
-- ever lengthened: the writer's lease is its own).
--
-- KEYS[1] lock name
-- ARGV[1] owner token
-- ARGV[2] new lease in ms; '0' means the lease the hold was taken with: its
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s (Redisson's default lease)
-- ARGV[3] 'read' or 'write'
-- ARGV[4] the reader lease keys' prefix: {NAME} (NAME when it holds a '{')
--
-- Returns {1, lease_ms}   renewed; lease_ms: the lease the hold now has (the
--                         hash's for a writer, the longest of the owner's level
--                         keys for a reader)
--         {-1}            not held: no such lock, or (a reader) the owner's
--                         field has gone while other readers are in it
--         {-2, holder}    held by another owner (a writer's token without
--                         ':write'; readers when a writer asks)
--         {-3, type}      the key is not a lock hash
--         {-4, layout}    'exclusive' (a plain RLock hash), or the owner holds
--                         the other side ('read' or 'write')
--         error 'ERR rlock: owner token is empty or reserved'   as rw_acquire.lua
local name, owner, lease, side, prefix = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

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

local field = side == 'write' and owner .. ':write' or owner
local other_field = side == 'write' and owner or owner .. ':write'
local meta_field = side == 'write' and 'rlock:meta' or 'rlock:meta:' .. owner

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

local count = redis.call('HGET', name, field)
if not count then
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

if lease == 0 then
  lease = 30000
  local raw = redis.call('HGET', name, meta_field)
  if raw and #raw <= 8192 then
    local ok, meta = pcall(cjson.decode, raw)
    local ttl = ok and type(meta) == 'table' and meta.ttl_ms
    if type(ttl) == 'number' and ttl >= 1 then -- (NaN is not >= 1)
      lease = math.min(math.floor(ttl), 31536000000)
    end
  end
end
local held = is_count(count) and tonumber(count) or 1

if side == 'write' then
  -- While re-entered, one level's renewal never shortens the lease another relies on.
  if held > 1 then
    local current = redis.call('PTTL', name)
    if current >= lease then
      return {1, current}
    end
  end
  redis.call('PEXPIRE', name, lease)
  return {1, lease}
end

-- side == 'read'
local own = lease
for i = math.min(held, 10000), 1, -1 do
  local key = level_key(owner, i)
  local current = redis.call('PTTL', key)
  if held > 1 and current >= lease then
    own = math.max(own, current)
  else
    redis.call('SET', key, 1, 'PX', lease)
  end
end

-- The hash lives as long as the longest level key of any reader.
local longest = -3
if mode == 'read' and redis.call('HLEN', name) <= 256 then
  local budget = 10000
  for _, f in ipairs(redis.call('HKEYS', name)) do
    local value = redis.call('HGET', name, f)
    if not reserved(f) and not writer_field(f) and is_count(value) and longest ~= nil then
      local n = tonumber(value)
      if n > budget then
        longest = nil
      else
        budget = budget - n
        for i = n, 1, -1 do
          longest = math.max(longest, redis.call('PTTL', level_key(f, i)))
        end
      end
    end
  end
else
  longest = nil
end
if longest and longest >= own then
  redis.call('PEXPIRE', name, longest)
elseif redis.call('PTTL', name) < own then
  redis.call('PEXPIRE', name, own)
end
return {1, own}
