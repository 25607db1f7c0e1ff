-- fence_raise.lua: Redlock's fencing write-back. After a majority granted the
-- lock, its token is the largest of the granting masters' counters; raising
-- each granting master's counter to it makes any later majority (which shares
-- at least one master with this one) issue a larger token.
--
-- KEYS[1] fencing counter (redisson_lock_token:{NAME})
-- ARGV[1] the token (a positive integer)
-- Returns the counter after the call. Never lowers it; a counter that is not a
-- number (forged) is replaced.
local token = tonumber(ARGV[1])
if not token or token < 1 then
  return redis.error_reply('ERR rlock: fencing token must be a positive integer')
end
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if not current or current < token then
  redis.call('SET', KEYS[1], ARGV[1])
  return token
end
return current
