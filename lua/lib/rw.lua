-- lib/rw.lua: Redisson's RReadWriteLock (see rw_acquire.lua), as the rw_*.lua
-- scripts read it. Uses the script's locals name, owner, side ('read' or
-- 'write') and prefix (the reader lease keys' prefix).
-- @include reserved.lua

-- A writer's field: OWNER:write.
local function writer_field(field)
  return #field > 6 and string.sub(field, -6) == ':write'
end

-- The answer to an owner token that may not take this side: '' or reserved
-- (lib/reserved.lua), or a reader's token that ends in ':write' (it would name a
-- writer's field). nil for a usable one.
local function refused_side()
  local refusal = refused(owner)
  if not refusal and side == 'read' and writer_field(owner) then
    refusal = redis.error_reply("ERR rlock: owner token is empty or reserved: a reader's token cannot end in ':write' (a writer's field)")
  end
  return refusal
end

-- The lease key of a reader's level i.
local function level_key(who, i)
  return prefix .. ':' .. who .. ':rwlock_timeout:' .. i
end

-- A reentry count: a positive integer of at most 15 digits (as Redisson's
-- HINCRBY leaves it). A value that is not one counts as one level.
local function is_count(value)
  return value and #value <= 15 and string.match(value, '^[1-9]%d*$') ~= nil
end
local function levels(value)
  return is_count(value) and tonumber(value) or 1
end

-- The answer to an owner that does not hold this side: it holds the other side
-- ({-4, 'read' / 'write'}), a writer holds the lock ({-2, its token without
-- ':write'}), or readers do and a writer asks ({-2, a reader}); else {-1}.
local function not_held()
  local other_field = side == 'write' and owner or owner .. ':write'
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

-- The longest lease left among the readers' level keys (-3 when none is
-- alive), as Redisson's read unlock computes it, counting `owner` (a reader)
-- with `owner_levels` levels; nil when the hash is too big to be a lock or
-- holds more levels than are worth reading (10000).
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

-- The owner's count on this side (its hash field `field`: OWNER, or OWNER:write)
-- and the lock's 'mode', as a release or a renewal finds them; or nil, nil and
-- the answer when the owner does not hold this side: {-1} no such lock, {-3,
-- type} a key of another type (never touched), {-4, 'exclusive'} a plain RLock
-- hash (no 'mode'), or not_held()'s answer.
local function held_side(field)
  local kind = redis.call('TYPE', name)['ok']
  if kind == 'none' then
    return nil, nil, {-1}
  end
  if kind ~= 'hash' then
    return nil, nil, {-3, kind}
  end
  local mode = redis.call('HGET', name, 'mode')
  if not mode then
    return nil, nil, {-4, 'exclusive'}
  end
  local count = redis.call('HGET', name, field)
  if not count then
    return nil, nil, not_held()
  end
  return count, mode, nil
end
