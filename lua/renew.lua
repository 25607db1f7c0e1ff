-- renew.lua: extend the lease of NAME if, and only if, the owner holds it.
-- Never creates a lock that has gone. With one level held the lease becomes
-- exactly the new one (it may shorten it: --hold-min relies on that); while
-- re-entered it is only ever lengthened.
--
-- KEYS[1] lock name
-- ARGV[1] owner token
-- ARGV[2] new lease in ms; '0' means the lease the lock was taken with
--
-- Returns {1, lease_ms}   renewed; lease_ms is the lease the key now has
--         {-1}            no such lock (expired, deleted)
--         {-2, holder}    held by another owner
--         {-3, type}      the key is not a lock hash
local name, owner, lease = KEYS[1], ARGV[1], tonumber(ARGV[2])

local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {-1}
end
if kind ~= 'hash' then
  return {-3, kind}
end
if redis.call('HEXISTS', name, owner) == 0 then
  for _, field in ipairs(redis.call('HKEYS', name)) do
    if field ~= 'rlock:meta' then
      return {-2, field}
    end
  end
  return {-2, ''}
end
if lease == 0 then
  lease = 30000
  local raw = redis.call('HGET', name, 'rlock:meta')
  if raw then
    local ok, meta = pcall(cjson.decode, raw)
    if ok and type(meta) == 'table' and tonumber(meta.ttl_ms) then
      lease = tonumber(meta.ttl_ms)
    end
  end
end
-- While the lock is re-entered (a nested run inside a run), one level's renewal
-- must never shorten the lease another level relies on: only lengthen it.
if tonumber(redis.call('HGET', name, owner)) > 1 then
  local current = redis.call('PTTL', name)
  if current >= lease then
    return {1, current}
  end
end
redis.call('PEXPIRE', name, lease)
return {1, lease}
