-- renew.lua: extend the lease of NAME if, and only if, the owner holds it.
-- Never creates a lock that has gone. With one level held the lease becomes
-- exactly the new one (it may shorten it: --hold-min relies on that); while
-- re-entered it is only ever lengthened. Sending it twice gives the same lease.
--
-- KEYS[1] lock name
-- ARGV[1] owner token
-- ARGV[2] new lease in ms; '0' means the lease the lock was taken with: the
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s (Redisson's default lease). The record is data
--         anyone can write: this is the only use of it, and it is bounded.
--
-- Returns {1, lease_ms}   renewed; lease_ms is the lease the key now has
--         {-1}            no such lock (expired, deleted)
--         {-2, holder}    held by another owner ('' when no owner field can be read)
--         {-3, type}      the key is not a lock hash
--         {-4, mode}      a Redisson read-write lock (mode 'read'/'write'): not
--                         renewed by a plain renew, whoever asks
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
local name, owner, lease = KEYS[1], ARGV[1], tonumber(ARGV[2])

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
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
if lease == 0 then
  lease = 30000
  local raw = redis.call('HGET', name, 'rlock:meta')
  if raw and #raw <= 8192 then
    local ok, meta = pcall(cjson.decode, raw)
    local ttl = ok and type(meta) == 'table' and meta.ttl_ms
    if type(ttl) == 'number' and ttl >= 1 then -- (NaN is not >= 1)
      lease = math.min(math.floor(ttl), 31536000000)
    end
  end
end
-- While the lock is re-entered (a nested run inside a run), one level's renewal
-- must never shorten the lease another level relies on: only lengthen it.
if (tonumber(count) or 1) > 1 then
  local current = redis.call('PTTL', name)
  if current >= lease then
    return {1, current}
  end
end
redis.call('PEXPIRE', name, lease)
return {1, lease}
