-- history_read.lua: reads NAME's history (rlock history NAME): the newest
-- ARGV[1] events of rlock_log:{NAME} (XREVRANGE, newest first), and what the
-- lock is now, so a lock Redisson made (it writes no history) is said to be one.
-- Read only. Everything it returns is data anyone could have written.
--
-- KEYS[1] lock name   KEYS[2] rlock_log:{NAME}
-- ARGV[1] how many events, at most (1 to 10000)
--
-- Returns {events, type, redisson}: events as XREVRANGE gives them ({id, {field,
-- value, ...}}, newest first; {} when the key is no stream), type NAME's TYPE,
-- redisson 1 when NAME is a held lock hash with no rlock record (Redisson's), else 0.
local name, log = KEYS[1], KEYS[2]
local limit = math.floor(tonumber(ARGV[1]) or 20)
if limit < 1 or limit > 10000 then
  return redis.error_reply('ERR rlock: history limit is not 1 to 10000')
end
local events = {}
if redis.call('TYPE', log)['ok'] == 'stream' then
  events = redis.call('XREVRANGE', log, '+', '-', 'COUNT', limit)
end
local kind = redis.call('TYPE', name)['ok']
local redisson = 0
if kind == 'hash' and redis.call('HLEN', name) <= 1000 then
  local ours, owners = false, false
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
return {events, kind, redisson}
