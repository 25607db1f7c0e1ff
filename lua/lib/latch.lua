-- lib/latch.lua: answering a request that arrives twice (its reply was lost and
-- the client sent it again) as its first send was answered, through latch keys.

-- The latch `key` as stored: its text; nil when there is none, or when the key
-- holds another type (not a latch of ours: read as none, and a SET replaces it).
local function latch_text(key)
  local stored = redis.pcall('GET', key)
  if type(stored) == 'string' then
    return stored
  end
  return nil
end

-- The answer the latch `key` holds: its numbers, when there are `size` of them;
-- nil when there is none, or when it is not a latch of ours (forged: the request
-- is then handled as a new one).
local function latched(key, size)
  local stored = latch_text(key)
  if not stored then
    return nil
  end
  local answer = {}
  for number in string.gmatch(stored, '%-?%d+') do
    answer[#answer + 1] = tonumber(number)
  end
  if #answer == size then
    return answer
  end
  return nil
end

-- A release's resend (release.lua, rw_release.lua): {n}, the levels left that
-- its latch `key` holds; nil when there is none.
local function released(key)
  local stored = tonumber(latch_text(key))
  if stored then
    return {stored}
  end
  return nil
end

-- A release that undoes one acquisition only (Redlock undoing a round whose
-- answer from this master was lost), `key` that acquisition's latch (nil: an
-- ordinary release): {-1} when the latch does not say it was applied (acquired
-- or re-entered), nothing changed; else nil, and the latch is dropped.
local function unapplied(key)
  if not key then
    return nil
  end
  local acquired = latch_text(key)
  local code = acquired and string.match(acquired, '^(%d) ')
  if code ~= '1' and code ~= '2' then
    return {-1}
  end
  redis.call('DEL', key)
  return nil
end
