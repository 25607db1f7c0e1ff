-- lib/permits.lua: Redisson's RPermitExpirableSemaphore (see permit_acquire.lua),
-- as the permit_*.lua scripts read and tidy it. Uses the script's locals name
-- (NAME: free permits), timeouts ({NAME}:timeout: permit id -> lease end in ms),
-- records (rlock_permits:{NAME}: owner -> holder record), channel
-- (redisson_sc:{NAME}), publish ('PUBLISH' or 'SPUBLISH') and owner.
-- @include holders.lua
-- @include record.lua
-- @include history.lua
-- @include damaged.lua

-- Before a permit script's first write: the DAMAGED answer (lib/damaged.lua)
-- when the permits' leases or rlock's records of them hold another type; nil
-- when they fit.
local function permits_damaged()
  return unfit({{timeouts, 'zset', "a semaphore's permits (a sorted set)"},
                {records, 'hash', "rlock's permit records (a hash)"}})
end

-- What NAME is: its type, and its free permits when it is a semaphore (a string
-- holding an integer); nil for 'none', a lock hash or a foreign key.
local function semaphore()
  local kind = redis.call('TYPE', name)['ok']
  local free = nil
  if kind == 'string' then
    local value = redis.call('GET', name)
    if #value <= 18 and string.match(value, '^%-?%d+$') then
      free = tonumber(value)
    end
  end
  return kind, free
end

-- The answer of a release or a renewal when NAME is another layout: {-4,
-- layout} for a lock hash ('exclusive', or Redisson's read-write 'read' /
-- 'write'), {-3, type} for a key of another type (or a string that is not a
-- count), never touched; nil when NAME is a semaphore or nothing.
local function other_layout(kind, free)
  if kind == 'hash' then
    return {-4, rw_mode(name) or 'exclusive'}
  end
  if kind ~= 'none' and free == nil then
    return {-3, kind}
  end
  return nil
end

-- Gives back the permits whose lease has ended, as every Redisson script does
-- first (at most 1000 a call: the rest stay counted as held until a later call,
-- never the other way round): out of the set and the records, added to NAME,
-- and the new count published when positive (Redisson's waiters wake on a
-- positive count). The history gets the 'expired' of each (its lease end). Returns the free permits now (`free` when none had ended),
-- and whether the owner's permit was one of them.
local function give_back_expired(free, now_ms)
  local ended = redis.call('ZRANGEBYSCORE', timeouts, '-inf', now_ms, 'WITHSCORES', 'LIMIT', 0, 1000)
  local expired = {}
  for i = 1, #ended - 1, 2 do
    expired[#expired + 1] = ended[i]
    if i <= 32 then
      -- The history: its hold expired at its lease end (the first 16 a call).
      log_permit_expired(ended[i], tonumber(ended[i + 1]), now_ms)
    end
  end
  local mine_expired = false
  if #expired > 0 then
    for _, id in ipairs(expired) do
      mine_expired = mine_expired or id == owner
    end
    redis.call('ZREM', timeouts, unpack(expired))
    redis.call('HDEL', records, unpack(expired))
    free = redis.call('INCRBY', name, #expired)
    if free > 0 then
      redis.call(publish, channel, free)
    end
  end
  return free, mine_expired
end

-- The answer when the owner holds no permit: {-1} when its permit has just been
-- given back (expired) or nobody holds one, else {-2, a holder}.
local function no_permit(mine_expired)
  local any = redis.call('ZRANGE', timeouts, 0, 0)
  if mine_expired or not any[1] then
    return {-1}
  end
  return {-2, #any[1] <= 1024 and any[1] or ''}
end

-- The holder record of `who` decoded (a table), or nil.
local function record_of(who)
  return decode_record(redis.call('HGET', records, who))
end

-- The re-entry levels a record holds: its count, when that is a number from 1
-- to below 1e15 (whole); 1 otherwise.
local function levels(record)
  local count = record and record.count
  if type(count) == 'number' and count >= 1 and count < 1e15 then
    return math.floor(count)
  end
  return 1
end
