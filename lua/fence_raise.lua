-- fence_raise.lua: Redlock's fencing write-back. After a majority granted the
-- lock, its token is the largest of the granting masters' counters; raising
-- each granting master's counter to it makes any later majority (which shares
-- at least one master with this one) issue a larger token. The holder record
-- of this acquisition ('rlock:meta' of the lock, when the owner holds it) then
-- shows that token too, the same on every master.
--
-- KEYS[1] fencing counter (redisson_lock_token:{NAME})   KEYS[2] lock name
-- ARGV[1] the token (a positive integer)   ARGV[2] owner token
-- @deadline ARGV[3]: changes nothing when run after this server time (ms; lib/deadline.lua)
-- Returns the counter after the call. Never lowers it; a counter that is not a
-- number, or a key of another type (forged), is replaced. A record that is not a JSON object is left alone.
-- @include deadline.lua
local past_deadline = too_late(ARGV[3])
if past_deadline then
  return past_deadline
end

local token = tonumber(ARGV[1])
if not token or token < 1 then
  return redis.error_reply('ERR rlock: fencing token must be a positive integer')
end
-- (GET of another type is an error: such a counter is not a number either)
local stored = redis.pcall('GET', KEYS[1])
local current = tonumber(type(stored) == 'string' and stored or (stored == false and '0') or nil)
if not current or current < token then
  redis.call('SET', KEYS[1], ARGV[1])
  current = token
end
if redis.call('TYPE', KEYS[2])['ok'] == 'hash' and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 and
    redis.call('HSTRLEN', KEYS[2], 'rlock:meta') <= 8192 then
  local ok, record = pcall(cjson.decode, redis.call('HGET', KEYS[2], 'rlock:meta') or '')
  if ok and type(record) == 'table' and record.fence ~= token then
    record.fence = token
    redis.call('HSET', KEYS[2], 'rlock:meta', cjson.encode(record))
  end
end
return current
