-- inspect.lua: read the state of each lock in KEYS, changing nothing.
--
-- KEYS    the names to read (no ARGV)
-- Returns one entry per key: {type, pttl, fields, complete}
--   type      'none' (free), 'hash', or another Redis type (a foreign key)
--   pttl      the key's PTTL (-1: no expiry, -2: none)
--   fields    for a hash: field, value, field, value... (owner tokens with their
--             counts, 'rlock:meta'); {} for any other type
--   complete  1 when fields is the whole hash; 0 when the hash is too big to be
--             a lock and fields is {}
--
-- The reply is capped per hash, because SCAN brings any hash here: a lock has
-- one owner field or a few (one per reader for Redisson's read locks) and rlock's
-- record, so a hash with more than 256 fields, a field name over 1024 bytes or
-- more than 64 KiB in all is not a lock (complete 0, no fields). A value over
-- 8192 bytes (no count or record is that long) comes back as ''.
local max_fields, max_name, max_value, max_total = 256, 1024, 8192, 65536
local out = {}
for i, name in ipairs(KEYS) do
  local kind = redis.call('TYPE', name)['ok']
  local fields, complete = {}, 1
  if kind == 'hash' and redis.call('HLEN', name) > max_fields then
    complete = 0
  elseif kind == 'hash' then
    local total = 0
    for _, field in ipairs(redis.call('HKEYS', name)) do
      local size = redis.call('HSTRLEN', name, field)
      local value = ''
      if size <= max_value then
        value = redis.call('HGET', name, field)
      end
      total = total + #field + #value
      if #field > max_name or total > max_total then
        fields, complete = {}, 0
        break
      end
      fields[#fields + 1] = field
      fields[#fields + 1] = value
    end
  end
  out[i] = {kind, redis.call('PTTL', name), fields, complete}
end
return out
