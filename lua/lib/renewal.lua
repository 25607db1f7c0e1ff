-- lib/renewal.lua: renewing a lease kept as a lock hash's PEXPIRE (renew.lua,
-- and rw_renew.lua for a writer).
-- @include clock.lua
-- @include record.lua

-- The lease a renewal sets: `lease` (ARGV, in ms), or when that is 0 the lease
-- the hold was taken with (recorded_lease), from its record, field `field` of
-- the hash `key`.
local function renewal_lease(lease, key, field)
  if lease == 0 then
    return recorded_lease(decode_record(redis.call('HGET', key, field)))
  end
  return lease
end

-- Renews the hash `key` held with `levels` levels to `lease` ms and answers
-- {1, the lease it now has}. With one level the lease becomes exactly `lease`
-- (it may shorten it: --hold-min relies on that); while re-entered (a nested
-- run inside a run), one level's renewal must never shorten the lease another
-- level relies on: it is only lengthened.
local function renew_hash(key, levels, lease)
  if levels > 1 then
    local current = redis.call('PTTL', key)
    if current >= lease then
      return {1, current}
    end
  end
  redis.call('PEXPIRE', key, lease)
  return {1, lease}
end
