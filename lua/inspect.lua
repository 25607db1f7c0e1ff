-- inspect.lua: read the state of each lock in KEYS, changing nothing.
--
-- Returns one entry per key: {type, pttl, fields}, where fields is the hash's
-- HGETALL (owner tokens with counts, and 'rlock:meta') for a hash, or {} for
-- any other type. type 'none' means the lock is free.
local out = {}
for i, name in ipairs(KEYS) do
  local kind = redis.call('TYPE', name)['ok']
  local fields = {}
  if kind == 'hash' then
    fields = redis.call('HGETALL', name)
  end
  out[i] = {kind, redis.call('PTTL', name), fields}
end
return out
