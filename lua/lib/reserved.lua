-- lib/reserved.lua: owner tokens that could name a field of a lock's own record.
-- A field 'mode' (Redisson's read-write lock) or 'rlock:...' (rlock's records)
-- is never an owner's.
local function reserved(field)
  return field == 'mode' or string.sub(field, 1, 6) == 'rlock:'
end

-- The answer to an owner token that is '' or reserved: an error, with nothing
-- changed. nil for a token that may own a lock.
local function refused(owner)
  if owner == '' or reserved(owner) then
    return redis.error_reply('ERR rlock: owner token is empty or reserved')
  end
  return nil
end
