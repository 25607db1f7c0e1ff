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
-- as they always did; rlock's waiters at the head of the set (the first
-- `turn_head` live ones; they listen there too, for Redisson's unlock and
-- forceUnlock and a release by a user without this key, which say '0' there
-- only) know the turn went to another and sleep on (no script call each),
-- unless nobody says 'taken' on the turns channel
-- (redisson_lock__channel:{NAME}:rlock:turns, which the waiter that takes the
-- lock on its turn publishes) within the turn's deadline (lock/waiter.hpp:
-- k_turn_deadline): the named waiter and the next were stopped or dead, and
-- a waiter at the head tries. The waiters behind the head listen on their own
-- channel only (a release wakes `turn_head` of them at most, not all: issue
-- 42's herd), until they are told 'head' or 'held' there or an attempt finds them at
-- the head: a release that names a turn, a queued waiter that takes the lock
-- without being named (after a release that named nobody, or at a turn's
-- deadline) and one that gives up tell the first `turn_head` waiters left
-- (those who listen already let it pass; one whose channel nobody hears is
-- dropped). A head of stopped waiters (SIGSTOP: still subscribed, so not
-- told apart from live ones) holds the waiters behind it until the lease end
-- they saw: the `turn_head` at the head stopped at once when a release names
-- nobody (Redisson's: none of them hears it), or the one named and the
-- `turn_head` after it. Every other subscriber (an older rlock, a Redlock's
-- waiters) takes '00' as a release. With nobody in the set, a release
-- publishes '0' there as before: everyone wakes.
--
-- The set expires once its last waiter has given up (its time, and 60 s more).
-- A waiter that died is dropped when a release finds its channel unheard.

-- How many live waiters, the first in the set, listen on the release and
-- turns channels (the head): enough that a stopped or dead one among them
-- leaves a live one to try at the turn's deadline; few, so that a release
-- wakes a handful of processes, not every waiter.
local turn_head = 4

-- The first `n` live waiters of the set `key` (their give-up time after
-- now_ms), the one that gives up first first.
local function first_live(key, now_ms, n)
  return redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', now_ms), '+inf', 'LIMIT', 0, n)
end

-- A waiter's attempt found the lock held: `owner`, who waits `wait_ms` more
-- from now_ms, is in the set `key` (an entry it has keeps its time). Returns
-- 1 when it is at the head (among the first turn_head live waiters to give
-- up), 2 when it is behind. (Only commands the guide's ACL line allows.)
local function wait_turn(key, owner, now_ms, wait_ms)
  local until_ms = now_ms + wait_ms
  redis.call('ZADD', key, 'NX', string.format('%.0f', until_ms), owner)
  local ttl = redis.call('PTTL', key)
  local keep = wait_ms + 60000
  if ttl < keep then -- (-1 no expiry, -2 gone: set it)
    redis.call('PEXPIRE', key, string.format('%.0f', keep))
  end
  local head = first_live(key, now_ms, turn_head)
  for i = 1, #head do
    if head[i] == owner then
      return 1
    end
  end
  return 2
end

-- Says `message` on a waiter's own channel `to` with `publish`; how many
-- heard it, and the command that reached it. A waiter on a sharded channel
-- (a Cluster's, when the client did not know it yet) is reached by SPUBLISH
-- (an error before Redis 7: nobody). A channel the user may not publish on
-- (an ACL) is heard by nobody we know of: nil.
local function say(publish, to, message)
  local heard = redis.pcall(publish, to, message)
  if heard == 0 and publish == 'PUBLISH' then
    local sharded = redis.pcall('SPUBLISH', to, message)
    if type(sharded) == 'number' and sharded > 0 then
      return sharded, 'SPUBLISH'
    end
  end
  if type(heard) ~= 'number' then
    return nil, publish
  end
  return heard, publish
end

-- The first turn_head live waiters in the set `key` are told `message`
-- ('head': a release just gave a turn to another, whose deadline they keep
-- from now, as the '00' they did not hear would have started it; 'held': the
-- lock is held, they only listen from now; '0' after a release that named
-- nobody: they try) on their own
-- channel (channel .. ':' .. owner) with `publish` ('PUBLISH' or 'SPUBLISH';
-- '' or nil: nobody is told). One whose channel nobody listens to is dropped
-- from the set (it died; or it has not subscribed yet, and its attempt after
-- subscribing puts it back, with its time) and the next is told instead, up
-- to twice turn_head in all.
local function tell_head(key, publish, channel, now_ms, message)
  if not publish or publish == '' or not channel then
    return
  end
  local live = first_live(key, now_ms, 2 * turn_head)
  local told = 0
  for i = 1, #live do
    if told >= turn_head then
      break
    end
    if say(publish, channel .. ':' .. live[i], message) == 0 then
      redis.call('ZREM', key, live[i])
    else
      told = told + 1
    end
  end
end

-- The waiter `owner` took the lock: out of the set. When it was still in it
-- (no release named it: it took the lock after one that named nobody, or at
-- a turn's deadline), the head is told, as that release would have.
local function taken_turn(key, owner, publish, channel, now_ms)
  if redis.call('ZREM', key, owner) == 1 then
    tell_head(key, publish, channel, now_ms, 'held')
  end
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
    live = first_live(key, now_ms, 4)
  end
  local sent = publish -- what reached the named waiter
  for i = 1, math.min(#live, 3) do
    tried[#tried + 1] = live[i]
    local heard, used = say(publish, channel .. ':' .. live[i], '0')
    if heard and heard > 0 then
      named, sent = i, used
      break
    end
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
    -- The head moved on: those now first listen on the release and turns
    -- channels ('head'); when nobody was named, they try ('0': those behind
    -- the head did not hear the release channel's).
    if #tried > 0 then
      tell_head(key, sent, channel, now_ms, named and 'head' or '0')
    end
  end
end
