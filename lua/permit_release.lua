-- permit_release.lua: undo one level of an owner's permit of NAME (--limit N),
-- or every level; at zero the permit returns to NAME, its holder record goes,
-- and the new count of free permits is published on redisson_sc:{NAME}, as
-- Redisson's release does, so Redisson's and rlock's waiters wake.
--
-- Layout as in permit_acquire.lua: NAME = free permits (string), {NAME}:timeout
-- = permit id (owner token) -> lease end in ms, rlock_permits:{NAME} = owner ->
-- holder record (JSON; its 'count' = re-entry levels, 1 when unreadable).
-- Expired permits are given back first (as every Redisson script does).
--
-- A request may arrive twice (its reply was lost and the client sent it again).
-- As release.lua, applying it SETs the latch KEYS[5] (one per request) to its
-- answer for ARGV[4] ms, and a resend finds the latch and returns that answer.
--
-- KEYS[1] NAME (free permits)          KEYS[2] {NAME}:timeout (permit leases)
-- KEYS[3] redisson_sc:{NAME} (channel) KEYS[4] rlock_permits:{NAME} (holder records)
-- KEYS[5] this request's latch: redisson_unlock_latch:{NAME}:OP
-- KEYS[6] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
--
-- Returns {n, free}      released; n levels are still held by the owner (0: the
--                        permit returned, and `free` permits were published)
--         {-1}           the owner holds no permit and nobody else does, its
--                        permit expired (given back just now), or there is no
--                        semaphore (NAME deleted: permits left in the set are
--                        void; the owner's is removed)
--         {-2, holder}   the owner holds no permit; `holder` holds one
--         {-3, type}     NAME is a key of another type (or a string that is not
--                        a count): never touched
--         {-4, layout}   NAME is a lock hash ('exclusive', or Redisson's
--                        read-write 'read' / 'write'): not released here
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of a lock's own record ('rlock:...', 'mode'):
--                 nothing changed
if redis.replicate_commands then
  redis.replicate_commands() -- Redis 3.2-4: TIME before writes
end

local name, timeouts, channel, records, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]

local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end
if owner == '' or reserved(owner) then
  return redis.error_reply('ERR rlock: owner token is empty or reserved')
end

local stored = redis.call('GET', latch)
if stored then
  local answer = {}
  for number in string.gmatch(stored, '%-?%d+') do
    answer[#answer + 1] = tonumber(number)
  end
  if #answer == 2 then
    return answer
  end -- not a latch of ours (forged): handled as a new request
end

if KEYS[6] then
  local acquired = redis.call('GET', KEYS[6])
  local code = acquired and string.match(acquired, '^(%d) ')
  if code ~= '1' and code ~= '2' then
    return {-1}
  end
  redis.call('DEL', KEYS[6])
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
  -- No semaphore (NAME deleted, e.g. by force-unlock): any permit left in
  -- the set is void; the owner's is tidied away.
  redis.call('ZREM', timeouts, owner)
  redis.call('HDEL', records, owner)
  return {-1}
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

if not redis.call('ZSCORE', timeouts, owner) then
  local any = redis.call('ZRANGE', timeouts, 0, 0)
  if mine_expired or not any[1] then
    return {-1}
  end
  return {-2, #any[1] <= 1024 and any[1] or ''}
end

-- Levels held: the record's count (it is data: 1 when unreadable).
local count = 1
local record = nil
local raw = redis.call('HGET', records, owner)
if raw and #raw <= 8192 then
  local ok, decoded = pcall(cjson.decode, raw)
  if ok and type(decoded) == 'table' then
    record = decoded
    if type(decoded.count) == 'number' and decoded.count >= 1 and decoded.count < 1e15 then
      count = math.floor(decoded.count)
    end
  end
end

local left = all and 0 or count - 1
if left > 0 then
  record.count = left
  redis.call('HSET', records, owner, cjson.encode(record))
else
  -- Publish first: if the user may not publish (an ACL without the channel),
  -- the script fails before changing anything.
  free = free + 1
  redis.call(publish, channel, free)
  redis.call('ZREM', timeouts, owner)
  redis.call('HDEL', records, owner)
  redis.call('INCRBY', name, 1)
end
redis.call('SET', latch, string.format('%d %d', left, free), 'PX', latch_ms)
return {left, free}
