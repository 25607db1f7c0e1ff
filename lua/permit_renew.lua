-- permit_renew.lua: move the lease end of an owner's permit of NAME (--limit N)
-- if, and only if, the owner still holds it. Never gives back a permit that
-- has gone (expired, released, removed). With one level held the lease becomes
-- exactly the new one (it may shorten it: --hold-min relies on that); while
-- re-entered it is only ever lengthened. Sending it twice gives the same lease.
--
-- Layout as in permit_acquire.lua: NAME = free permits (string), {NAME}:timeout
-- = permit id (owner token) -> lease end in ms (server time), rlock_permits:{NAME}
-- = owner -> holder record (JSON). Expired permits are given back first (as
-- every Redisson script does: the free count is published when positive).
--
-- KEYS[1] NAME (free permits)          KEYS[2] {NAME}:timeout (permit leases)
-- KEYS[3] redisson_sc:{NAME} (channel) KEYS[4] rlock_permits:{NAME} (holder records)
-- ARGV[1] owner token
-- ARGV[2] new lease in ms; '0' means the lease the permit was taken with: the
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s. The record is data anyone can write: bounded.
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
--
-- Returns {1, lease_ms}   renewed; the permit's lease now ends lease_ms from now
--         {-1}            the owner's permit is gone (expired, released, removed)
--                         and nobody else holds one, or there is no semaphore
--                         (NAME deleted, e.g. by force-unlock: its permits are void)
--         {-2, holder}    the owner holds no permit; `holder` holds one
--         {-3, type}      NAME is a key of another type: never touched
--         {-4, layout}    NAME is a lock hash ('exclusive', 'read', 'write')
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of a lock's own record ('rlock:...', 'mode'):
--                 nothing changed
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, timeouts, channel, records = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
end

local kind = redis.call('TYPE', name)['ok']
if kind == 'hash' then
  local layout = redis.call('HGET', name, 'mode')
  return {-4, layout and (#layout <= 16 and layout or '?') or 'exclusive'}
end
local free = nil
if kind == 'string' then
  local value = redis.call('GET', name)
  if #value <= 18 and string.match(value, '^%-?%d+$') then
    free = tonumber(value)
  end
end
if kind ~= 'none' and free == nil then
  return {-3, kind}
end
if kind == 'none' then
  return {-1} -- no semaphore (NAME deleted, e.g. by force-unlock): its permits are void
end

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Give back the permits whose lease has ended (at most 1000 a call).
local expired = redis.call('ZRANGEBYSCORE', timeouts, '-inf', now_ms, 'LIMIT', 0, 1000)
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

local lease_end = tonumber(redis.call('ZSCORE', timeouts, owner))
if not lease_end then
  local any = redis.call('ZRANGE', timeouts, 0, 0)
  if mine_expired or not any[1] then
    return {-1}
  end
  return {-2, #any[1] <= 1024 and any[1] or ''}
end

local count = 1
local raw = redis.call('HGET', records, owner)
local record = nil
if raw and #raw <= 8192 then
  local ok, decoded = pcall(cjson.decode, raw)
  if ok and type(decoded) == 'table' then
    record = decoded
  end
end
if record and type(record.count) == 'number' and record.count >= 1 and record.count < 1e15 then
  count = math.floor(record.count)
end
if lease == 0 then
  lease = 30000
  local ttl = record and record.ttl_ms
  if type(ttl) == 'number' and ttl >= 1 then -- (NaN is not >= 1)
    lease = math.min(math.floor(ttl), 31536000000)
  end
end

-- While the permit is re-entered (a nested run inside a run), one level's
-- renewal must never shorten the lease another level relies on: only lengthen it.
if count > 1 and lease_end - now_ms >= lease then
  return {1, lease_end - now_ms}
end
redis.call('ZADD', timeouts, now_ms + lease, owner)
if redis.call('EXISTS', records) == 1 and redis.call('PTTL', records) < lease then
  redis.call('PEXPIRE', records, lease)
end
return {1, lease}
