-- lib/exclusive.lua: taking Redisson's RLock hash (NAME: {owner token = reentry
-- count}, 'rlock:meta', lease = PEXPIRE), as acquire.lua and fair_acquire.lua
-- do once the queue lets them. Uses the script's locals name, owner, lease and
-- those lib/acquisition.lua names.
-- @include acquisition.lua
-- @include holders.lua
-- @include record.lua
-- @include clock.lua

-- The fencing token of the current hold: the counter cannot move while the
-- lock is held (only a fresh acquisition takes a token), 0 when missing. The
-- record's 'fence' is never believed. (Read once, by fence_damaged.)
local function current_fence()
  return fence_now or counter_value(latch_text(fence_key)) or 0 -- (damaged: none)
end

-- Takes the free lock for the owner: a fresh fencing token, its field (one
-- level), its record (ARGV[5] .. ARGV[8]: host, pid, command, version) and the
-- lease; in the history, first the endings of holds that went unseen
-- (expired), then 'acquired'; `turns`: the hold's release names the plain
-- waiters' turns (the record says so). Returns the answer {1, 1, fence, lease},
-- or the DAMAGED answer when the counter cannot give a token (nothing written).
local function take(now_ms, turns)
  -- The token first: a counter INCR refuses ends it here, with nothing written
  -- (the DAMAGED answer, lib/damaged.lua).
  local fence, damaged = new_fence(now_ms)
  if not fence then
    return damaged
  end
  -- The previous holds, if the history has them open, ended unseen (lib/history.lua).
  log_gone_holds(now_ms)
  redis.call('HSET', name, owner, 1, 'rlock:meta', holder_record(5, now_ms, lease, fence, nil, turns))
  redis.call('PEXPIRE', name, lease)
  return applied(1, 1, fence, lease)
end

-- An attempt on the lock hash NAME: the owner's own hold re-entered, or the
-- hold as it is now when the token is the client's own (a resend of an applied
-- acquisition), and true; else the busy answer, and false. `renews`: the
-- re-entering process will renew the hold (rlock run), so a re-entry makes the
-- record name it (name_renewer, record ARGV from 5 as take's).
local function attempt_held(renews)
  -- A Redisson read-write lock (its 'mode' field) is never a plain lock, whoever asks.
  local mode = rw_mode(name)
  if mode then
    return busy_answer(name, mode), false
  end
  local count = redis.call('HGET', name, owner)
  if not count then
    return busy_answer(name, nil), false
  end
  if own_token then
    return {1, math.floor(tonumber(count) or 1), current_fence(), redis.call('PTTL', name)}, true
  end
  -- As Redisson does, HINCRBY; a count that is not a positive integer (the hash
  -- is data) counts as one level.
  if #count <= 15 and string.match(count, '^[1-9]%d*$') then
    count = redis.call('HINCRBY', name, owner, 1)
  else
    count = 2
    redis.call('HSET', name, owner, count)
  end
  -- A re-entry lengthens the lease if it asks for more, never shortens it: the
  -- outer level keeps renewing at its own pace.
  local current = redis.call('PTTL', name)
  if current < lease then
    redis.call('PEXPIRE', name, lease)
    current = lease
  end
  if renews then
    name_renewer(name, 'rlock:meta', 5, server_ms(), lease)
  end
  return applied(2, count, current_fence(), current), true
end
