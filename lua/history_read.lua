-- history_read.lua: reads NAME's history (rlock history NAME): the newest
-- ARGV[1] events of rlock_log:{NAME} (XREVRANGE, newest first), what the lock
-- is now, so a lock Redisson made (it writes no history) is said to be one, and
-- whether the history can be written there at all, so an empty one is not
-- taken for a lock rlock never changed (issue 30). Read only. Everything it
-- returns is data anyone could have written.
--
-- KEYS[1] lock name   KEYS[2] rlock_log:{NAME}; absent when the user may not
--         use that key (its ACL): only the lock is read
-- ARGV[1] how many events, at most (1 to 10000)
--
-- Returns {events, type, redisson, log_type, writable, ours}: events as XREVRANGE
-- gives them ({id, {field, value, ...}}, newest first; {} when the key is no
-- stream), type NAME's TYPE, redisson 1 when NAME is a held lock hash with no
-- rlock record (Redisson's), else 0; log_type the history key's TYPE ('none',
-- 'stream', or another type, where no event can be appended), false without
-- KEYS[2]; writable 1 when this user may append to it (XADD), 0 when its ACL
-- forbids it, -1 when the server cannot tell (before Redis 7.0); ours 1 when
-- NAME is a hash with an rlock record (a lock rlock holds now), else 0.
local name, log = KEYS[1], KEYS[2]
local limit = math.floor(tonumber(ARGV[1]) or 20)
if limit < 1 or limit > 10000 then
  return redis.error_reply('ERR rlock: history limit is not 1 to 10000')
end
local events, log_type, writable = {}, false, -1
if log then
  log_type = redis.call('TYPE', log)['ok']
  if log_type == 'stream' then
    events = redis.call('XREVRANGE', log, '+', '-', 'COUNT', limit)
  end
  if redis.acl_check_cmd then
    writable = redis.acl_check_cmd('XADD', log, 'MAXLEN', '~', '1000', '*', 'kind', 'x') and 1 or 0
  end
end
local kind = redis.call('TYPE', name)['ok']
local redisson, ours = 0, false
if kind == 'hash' and redis.call('HLEN', name) <= 1000 then
  local owners = false
  for _, field in ipairs(redis.call('HKEYS', name)) do
    if string.sub(field, 1, 10) == 'rlock:meta' then
      ours = true
    elseif field ~= 'mode' then
      owners = true
    end
  end
  if owners and not ours then
    redisson = 1
  end
end
return {events, kind, redisson, log_type, writable, ours and 1 or 0}
