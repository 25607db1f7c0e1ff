-- acquire.lua: take the lock NAME for an owner, or re-enter it.
--
-- Redisson's RLock format: NAME is a hash {owner token = reentry count}, the lease
-- is the key's PEXPIRE. rlock adds the field 'rlock:meta' (JSON about the holder)
-- and takes a fencing token from Redisson's RFencedLock counter on each fresh
-- acquisition.
--
-- KEYS[1] lock name            KEYS[2] fencing counter (same hash slot)
-- ARGV[1] owner token          ARGV[2] lease in ms
-- ARGV[3] operation id: a retry of the same request (after a lost reply) carries
--         the same id and is answered without counting the re-entry twice
-- ARGV[4] host  ARGV[5] pid  ARGV[6] command  ARGV[7] rlock version
--
-- Returns {1, count, fence, lease_ms}        acquired (fresh, or a retry of it)
--         {2, count, fence, lease_ms}        re-entered
--         {0, holder, pttl, type, meta}      held by someone else (type 'hash' or
--                                            a foreign type such as 'string')
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, fence_key = KEYS[1], KEYS[2]
local owner, lease, op = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local meta_field = 'rlock:meta'

local function decode(raw)
  if not raw then
    return nil
  end
  local ok, value = pcall(cjson.decode, raw)
  if ok and type(value) == 'table' then
    return value
  end
  return nil
end

local kind = redis.call('TYPE', name)['ok']

if kind == 'none' then
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
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
    host = ARGV[4], pid = tonumber(ARGV[5]), command = ARGV[6], version = ARGV[7],
    acquired_at_ms = now_ms,
    ttl_ms = lease, fence = fence, op = op,
  })
  redis.call('HSET', name, owner, 1, meta_field, meta)
  redis.call('PEXPIRE', name, lease)
  return {1, 1, fence, lease}
end

if kind ~= 'hash' then
  return {0, '', redis.call('PTTL', name), kind, false}
end

local count = redis.call('HGET', name, owner)
if count then
  local meta = decode(redis.call('HGET', name, meta_field))
  local fence = meta and tonumber(meta.fence) or 0
  if meta and meta.op == op then
    return {1, tonumber(count), fence, redis.call('PTTL', name)}
  end
  count = redis.call('HINCRBY', name, owner, 1)
  if meta then
    meta.op = op
    redis.call('HSET', name, meta_field, cjson.encode(meta))
  end
  -- A re-entry lengthens the lease if it asks for more, never shortens it: the
  -- outer level keeps renewing at its own pace.
  local current = redis.call('PTTL', name)
  if current >= lease then
    return {2, count, fence, current}
  end
  redis.call('PEXPIRE', name, lease)
  return {2, count, fence, lease}
end

local fields = redis.call('HGETALL', name)
local holder, meta = '', false
for i = 1, #fields, 2 do
  if fields[i] == meta_field then
    meta = fields[i + 1]
  elseif holder == '' then
    holder = fields[i]
  end
end
return {0, holder, redis.call('PTTL', name), 'hash', meta}
