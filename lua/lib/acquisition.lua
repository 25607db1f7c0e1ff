-- lib/acquisition.lua: what the acquisition scripts (acquire.lua,
-- fair_acquire.lua, rw_acquire.lua, permit_acquire.lua) share: answering a
-- resend, and a fresh fencing token. Uses the script's locals own_token
-- (ARGV[3] = '1'), latch (this request's latch key), latch_ms (its lifetime)
-- and fence_key (the fencing counter, redisson_lock_token:{NAME}).
-- @include latch.lua
-- @include history.lua

-- A resend's answer, when the token was given (ARGV[3] = '0'): the one the first
-- send left in the latch, and a fifth element 1: an earlier send applied it, so
-- its lease started then, not now (the client dates it from its earliest send
-- that got no answer: lock::lease_start, issue 41). nil for a new request, and
-- for a token of the client's own (the script finds a resend by the token in
-- the lock, and answers the lease left now, which dates itself).
local function resent()
  if own_token then
    return nil
  end
  local answer = latched(latch, 4)
  if answer and (answer[1] == 1 or answer[1] == 2) then
    answer[5] = 1
  end
  return answer
end

-- Whether NAME is a lock hash whose owner's hold has no rlock record (made by
-- Redisson: its history is not kept). A semaphore (a string) is taken as ours.
local function redisson_hold()
  return redis.call('TYPE', name)['ok'] == 'hash' and redis.call('HEXISTS', name, 'rlock:meta') == 0 and
             redis.call('HEXISTS', name, 'rlock:meta:' .. owner) == 0
end

-- Applies an answer: remembered in the latch when the token was given, and
-- logged in the history (lib/history.lua): code 1 acquired, 2 re-entered (not
-- for a hold Redisson made). Only a change is applied: a resend's answer (from
-- the latch, or the client's own token found in the lock) never comes here.
local function applied(code, count, fence, lease_ms)
  if not own_token then
    redis.call('SET', latch, string.format('%d %d %.0f %d', code, count, fence, lease_ms), 'PX', latch_ms)
  end
  if code == 1 then
    log_event('acquired', owner, {'fence', fence, 'lease_ms', lease_ms})
  elseif log_key and not redisson_hold() then
    log_event('re-entered', owner, {'count', count, 'fence', fence, 'lease_ms', lease_ms})
  end
  return {code, count, fence, lease_ms}
end

-- A fresh acquisition's fencing token. A missing counter (first use, or a
-- server that lost its data in a restart without persistence) starts at the
-- server's clock in ms (now_ms), so tokens stay above every token handed out
-- before (unless more than one acquisition a millisecond was sustained). An
-- existing counter (also Redisson's RFencedLock's) just counts on. (INCR
-- first: a counter that was missing answers 1, and is then set to now_ms.)
local function new_fence(now_ms)
  local fence = redis.call('INCR', fence_key)
  if fence == 1 then
    redis.call('SET', fence_key, now_ms)
    return now_ms
  end
  return fence
end
