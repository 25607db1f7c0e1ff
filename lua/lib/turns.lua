-- lib/turns.lua: whose turn it is when a plain lock is freed (issue 32), so that
-- a release wakes one waiter, not all of them.
--
-- rlock's plain waiters (acquire -w, run -w; not a Redlock's, not fair ones)
-- put themselves in the sorted set rlock_turns:{NAME} (`key` below) when an
-- attempt finds the lock held: owner token -> the server time (ms) at which
-- that waiter gives up (its -w deadline). A release that frees the lock names
-- the live waiter that gives up first (the set's first entry whose time is
-- still ahead) and takes it out of the set: it gets '0' on its own channel
-- (the release channel .. ':' .. owner, where RFairLock wakes its head), the
-- release channel gets '00', and the one after it gets 'next' on its own (it
-- tries once a moment later, in case the first died before taking the lock).
-- Redisson's waiters read '00' as the release message (LongCodec: 0) and wake
-- as they always did; rlock's waiters in the set (they listen there too, for
-- Redisson's unlock and forceUnlock and a release by a user without this
-- key, which say '0' there only) know the turn went to another and sleep on
-- (no script call each), unless nobody says 'taken' on the turns channel
-- (redisson_lock__channel:{NAME}:rlock:turns, which the waiter that takes the
-- lock on its turn publishes) within the turn's deadline (lock/waiter.hpp:
-- k_turn_deadline): the named waiter and the next were stopped or dead, and
-- any waiter tries. Every other subscriber (an older rlock, a Redlock's
-- waiters) takes '00' as a release. With nobody in the set, a release
-- publishes '0' there as before: everyone wakes.
--
-- The set expires once its last waiter has given up (its time, and 60 s more).
-- A waiter that died is dropped when a release finds its channel unheard.

-- A waiter's attempt found the lock held: `owner`, who waits `wait_ms` more
-- from now_ms, is in the set `key` (an entry it has keeps its time).
local function wait_turn(key, owner, now_ms, wait_ms)
  local until_ms = now_ms + wait_ms
  redis.call('ZADD', key, 'NX', string.format('%.0f', until_ms), owner)
  local ttl = redis.call('PTTL', key)
  local keep = wait_ms + 60000
  if ttl < keep then -- (-1 no expiry, -2 gone: set it)
    redis.call('PEXPIRE', key, string.format('%.0f', keep))
  end
end

-- The waiter `owner` took the lock: out of the set.
local function taken_turn(key, owner)
  redis.call('ZREM', key, owner)
end

-- Wakes the waiters of a plain lock that is being freed (no fair waiter
-- queued): the live waiter in the set `key` (nil: none kept) that gives up
-- first, by '0' on its own channel, then '00' on the release channel and
-- 'next' to the live one after it; or, with nobody in the set (or none who
-- listens), '0' on the release channel. A named waiter whose channel nobody
-- listens to (it died: its subscription went with it; or it has not
-- subscribed yet and will try once it has) is dropped and the next one is
-- named, three at most; when none of the three listens, the fourth is told
-- 'next' (its own channel) besides the '0' on the release channel.
-- `publish`: 'PUBLISH' or 'SPUBLISH'. The release channel's message goes out
-- before anything is changed: if the user may not publish there (an ACL) the
-- script fails with nothing changed; a waiter's own channel the user may not
-- publish on is no turn.
local function wake_plain(key, publish, channel, now_ms)
  local named = nil
  local tried, live = {}, {}
  if key then
    live = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', now_ms), '+inf', 'LIMIT', 0, 4)
  end
  local sent = publish -- what reached the named waiter
  for i = 1, math.min(#live, 3) do
    tried[#tried + 1] = live[i]
    local heard = redis.pcall(publish, channel .. ':' .. live[i], '0')
    if heard == 0 and publish == 'PUBLISH' then
      -- A waiter on a sharded channel (a Cluster's, when the client did not
      -- know it yet): SPUBLISH reaches it (an error before Redis 7: nobody).
      sent = 'SPUBLISH'
      heard = redis.pcall(sent, channel .. ':' .. live[i], '0')
    end
    if type(heard) == 'number' and heard > 0 then
      named = i
      break
    end
    sent = publish
  end
  redis.call(publish, channel, named and '00' or '0')
  -- The live one after the named (or, when none of those tried listens, after
  -- the last tried: it listens on its own channel only) tries a moment later.
  local after = named and named + 1 or #tried + 1
  if live[after] then
    redis.pcall(sent, channel .. ':' .. live[after], 'next')
  end
  if key then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now_ms))
    if #tried > 0 then
      redis.call('ZREM', key, unpack(tried))
    end
  end
end
