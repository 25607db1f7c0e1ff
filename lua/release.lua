-- release.lua: undo one level of an owner's hold on NAME, or every level.
-- When the count reaches zero the lock is deleted and '0' is published on the
-- release channel, exactly as Redisson's unlock does, so Redisson and rlock
-- waiters wake each other.
--
-- KEYS[1] lock name   KEYS[2] release channel
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] operation id (a retried request is applied once)
-- ARGV[4] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
--
-- Returns {n}            released; n levels are still held by the owner (0: freed)
--         {-1}           no such lock
--         {-2, holder}   held by another owner
--         {-3, type}     the key is not a lock hash (foreign): never touched
local name, channel = KEYS[1], KEYS[2]
local owner, all, op, publish = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]
local meta_field = 'rlock:meta'

local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {-1}
end
if kind ~= 'hash' then
  return {-3, kind}
end

local count = redis.call('HGET', name, owner)
if not count then
  local fields = redis.call('HKEYS', name)
  for _, field in ipairs(fields) do
    if field ~= meta_field then
      return {-2, field}
    end
  end
  return {-2, ''}
end

local raw = redis.call('HGET', name, meta_field)
local meta = nil
if raw then
  local ok, value = pcall(cjson.decode, raw)
  if ok and type(value) == 'table' then
    meta = value
  end
end
if meta and meta.op == op then
  return {tonumber(count)}
end

local left = 0
if not all then
  left = tonumber(count) - 1
end
if left > 0 then
  redis.call('HINCRBY', name, owner, -1)
  if meta then
    meta.op = op
    redis.call('HSET', name, meta_field, cjson.encode(meta))
  end
  return {left}
end
-- Publish first: if the user may not publish (an ACL without the channel), the
-- script fails before changing anything. Subscribers see the message only after
-- the script has run, so they never find the lock still there.
redis.call(publish, channel, '0')
redis.call('DEL', name)
return {0}
