-- force_unlock.lua: remove NAME whoever holds it, whatever its type, and wake
-- waiters (rlock's and Redisson's) with '0' on the release channel.
--
-- KEYS[1] lock name   KEYS[2] release channel
-- ARGV[1] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
--
-- Returns {1, type}   removed a key of that type
--         {0}         there was nothing to remove
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  return {0}
end
redis.call(ARGV[1], KEYS[2], '0') -- first, so an ACL denial changes nothing
redis.call('DEL', KEYS[1])
return {1, kind}
