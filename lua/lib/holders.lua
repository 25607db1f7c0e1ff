-- lib/holders.lua: who holds a lock hash (RLock, RFairLock, RReadWriteLock), as
-- the hash alone tells. A hash with more than 256 fields is not a lock: no
-- holder is read from it.
-- @include reserved.lua

-- The first owner field of the hash `key` (not 'mode', not rlock's records, at
-- most 1024 bytes); '' when none can be read.
local function first_holder(key)
  if redis.call('HLEN', key) <= 256 then
    for _, field in ipairs(redis.call('HKEYS', key)) do
      if #field <= 1024 and not reserved(field) then
        return field
      end
    end
  end
  return ''
end

-- The value of `field` in the hash `key` as it is answered: false when absent,
-- '' when longer than 8 KiB.
local function raw_field(key, field)
  if redis.call('HEXISTS', key, field) == 0 then
    return false
  end
  if redis.call('HSTRLEN', key, field) > 8192 then
    return ''
  end
  return redis.call('HGET', key, field)
end

-- Redisson's read-write 'mode' of the hash `key` ('read', 'write'; '?' when
-- longer than 16 bytes); nil for a hash without one (RLock, RFairLock).
local function rw_mode(key)
  local mode = redis.call('HGET', key, 'mode')
  return mode and (#mode <= 16 and mode or '?') or nil
end

-- An acquisition's busy answer for the lock hash `key`: {0, holder, pttl, 'hash',
-- meta, mode}: the first owner field ('' when none can be read), the key's PTTL,
-- its raw 'rlock:meta' ('' when longer than 8 KiB, false when absent or not
-- read) and `mode` (the layout it is held in, when the answer tells it; nil: not).
local function busy_answer(key, mode)
  local holder, meta = '', false
  if redis.call('HLEN', key) <= 256 then
    holder = first_holder(key)
    meta = raw_field(key, 'rlock:meta')
  end
  return {0, holder, redis.call('PTTL', key), 'hash', meta, mode}
end

-- The owner's reentry count in the plain lock hash `key` (RLock, RFairLock), as
-- a release or a renewal finds it; or nil and the answer when the owner does not
-- hold it: {-1} no such lock, {-3, type} a key of another type (never touched),
-- {-4, mode} a Redisson read-write lock (mode 'read' / 'write', whoever asks),
-- {-2, holder} another owner's ('' when no owner field can be read). Two HGETs
-- when the owner holds it.
local function owned_count(key, owner)
  local count = redis.pcall('HGET', key, owner)
  if type(count) == 'table' then
    return nil, {-3, redis.call('TYPE', key)['ok']} -- WRONGTYPE: not a hash
  end
  local mode = rw_mode(key)
  if mode then
    return nil, {-4, mode}
  end
  if not count then
    if redis.call('EXISTS', key) == 0 then
      return nil, {-1}
    end
    return nil, {-2, first_holder(key)}
  end
  return count, nil
end
