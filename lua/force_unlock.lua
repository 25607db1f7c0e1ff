-- force_unlock.lua: remove NAME whoever holds it, whatever its type, and wake
-- waiters (rlock's and Redisson's) with '0' on the release channel.
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- applying it SETs the latch KEYS[3] to the removed key's type for ARGV[2] ms,
-- and a resend finds it and answers as the first send did.
--
-- KEYS[1] lock name   KEYS[2] release channel
-- KEYS[3] this request's latch: redisson_unlock_latch:{NAME}:OP (NAME's hash slot)
-- ARGV[1] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[2] latch lifetime in ms
--
-- Returns {1, type}   removed a key of that type (or a resend of that removal)
--         {0}         there was nothing to remove
local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local stored = redis.call('GET', latch)
if stored then
  return {1, stored}
end
local kind = redis.call('TYPE', name)['ok']
if kind == 'none' then
  return {0}
end
redis.call(ARGV[1], channel, '0') -- first, so an ACL denial changes nothing
redis.call('DEL', name)
redis.call('SET', latch, kind, 'PX', ARGV[2])
return {1, kind}
