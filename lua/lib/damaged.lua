-- lib/damaged.lua: a lock's keys of a type (or a value) a script cannot use
-- (issue 44). Every key is data anyone can write, and Redis does not roll a
-- script back: a command that fails midway (WRONGTYPE, "not an integer", an
-- INCR at 2^63-1) leaves what the script wrote before it. So each script that
-- changes something checks, before its first write, every key it will write
-- or read with a command that cares about the type, here:
--  * a key it cannot do without (the fencing counter of an acquisition, a fair
--    waiter's queue, a semaphore's permits and records) that holds another
--    type or a value it cannot count on: the script changes nothing and answers
--    the error reply
--      DAMAGED the key KEY is a TYPE, not WHAT: nothing changed (...)
--    (redis/errors.cpp: RedisErrorKind::damaged, exit 70 with that line);
--  * a key that only orders or wakes waiters (a plain lock's view of the fair
--    queue, the plain waiters' turns, the writers' intents): left alone, as
--    if it were absent (waiters are then all woken, nobody is queued there).
-- A key that is absent is always fine. Reading a type costs one TYPE, so the
-- scripts check only the keys the request will use, when it will use them.

-- The DAMAGED answer for `key`, found to be `found` (a type, or a description
-- of its value) where `what` belongs.
local function damaged_reply(key, found, what)
  return redis.error_reply(string.format(
      'DAMAGED the key %s is %s, not %s: nothing changed (delete that key to use the lock again)',
      key, found, what))
end

-- `key` when it is absent or a `kind` (nil stays nil); else nil and the type it
-- holds: the caller leaves it alone, as if it had not been given.
local function usable(key, kind)
  local found = key and redis.call('TYPE', key)['ok']
  if not found or found == 'none' or found == kind then
    return key, nil
  end
  return nil, found
end

-- The DAMAGED answer for the first of `checks` ({key, kind, what}, ...; a nil
-- key is skipped) that holds another type than its kind; nil when all fit.
local function unfit(checks)
  for _, check in ipairs(checks) do
    local _, found = usable(check[1], check[2])
    if found then
      return damaged_reply(check[1], 'a ' .. found, check[3])
    end
  end
  return nil
end

-- The number a fencing counter's text holds when it is one rlock can raise and
-- read exactly (Lua's numbers are doubles): a whole number from 0 to 2^53 - 2
-- as Redis writes one (no sign, no leading zero, no space); nil otherwise.
-- rlock starts a counter at the server's clock in ms, Redisson's RFencedLock
-- at 1: only a forged one is ever outside.
local function counter_value(text)
  if text == '0' or (text and #text <= 16 and string.match(text, '^[1-9]%d*$') and
                     (#text < 16 or text <= '9007199254740990')) then
    return tonumber(text)
  end
  return nil
end

-- The fencing counter `key` an acquisition may raise: its value (a number; 0
-- when absent) and nil; or nil and the DAMAGED answer when it is another type
-- or holds anything else (text, a fraction, a negative number, 2^53 - 1 or
-- more). One GET, which the acquisition's own reads of the counter reuse.
local function fence_counter(key)
  local value = redis.pcall('GET', key)
  if type(value) == 'table' then
    return nil, damaged_reply(key, 'a ' .. redis.call('TYPE', key)['ok'], 'a fencing counter')
  end
  if not value then
    return 0, nil
  end
  local number = counter_value(value)
  if not number then
    -- (shown when short and plain: the answer is one line of text)
    local shown = 'a string of ' .. #value .. ' bytes'
    if #value <= 24 and string.match(value, '^[%w%.%-%+ ]*$') then
      shown = "'" .. value .. "'"
    end
    return nil, damaged_reply(key, shown, 'a fencing counter (a whole number from 0 to 2^53 - 2)')
  end
  return number, nil
end
