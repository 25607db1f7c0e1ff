-- lib/acquisition.lua: what the acquisition scripts (acquire.lua,
-- fair_acquire.lua, rw_acquire.lua, permit_acquire.lua) share: answering a
-- resend, and a fresh fencing token. Uses the script's locals own_token
-- (ARGV[3] = '1'), latch (this request's latch key), latch_ms (its lifetime)
-- and fence_key (the fencing counter, redisson_lock_token:{NAME}).
-- @include latch.lua
-- @include history.lua
-- @include damaged.lua

-- The fencing counter's value when the acquisition checked it (fence_damaged),
-- and after a fresh token (new_fence): its reads of the counter use it.
local fence_now = nil

-- Checked before the acquisition's first write, where it writes anything before
-- its token (a fair queue, a semaphore, a read-write hash): nil when the fencing
-- counter can give a fresh token (absent, or a whole number from 0 to 2^53 - 2);
-- else the DAMAGED answer (lib/damaged.lua), nothing changed. A counter that is
-- another type, text or at its largest value is never replaced: tokens must not
-- go back.
local function fence_damaged()
  local value, reply = fence_counter(fence_key)
  fence_now = value
  return reply
end

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
-- A counter INCR refuses for its type or value, or one that counts to no
-- token (negative, beyond 2^53 - 1, lib/damaged.lua's counter_value: counted
-- back at once): nil and the DAMAGED answer, nothing changed. A write the
-- server refuses whatever the key holds (OOM at maxmemory, an ACL, a
-- replica): nil and that error as it is (the soak's evict fault once had an
-- OOM called a damaged counter, with the advice to delete it). It is a plain acquisition's first
-- write, so its usual path needs no check before it; scripts that write
-- before their token call fence_damaged first.
local function new_fence(now_ms)
  local fence = redis.pcall('INCR', fence_key)
  if type(fence) == 'table' then
    local why = fence.err or ''
    if not (string.find(why, 'WRONGTYPE', 1, true) or string.find(why, 'not an integer', 1, true) or
            string.find(why, 'overflow', 1, true)) then
      -- The server refused the write itself (OOM at maxmemory, an ACL, a
      -- replica): said as it is, not as the counter's fault (nothing changed).
      return nil, fence
    end
  elseif fence < 1 or fence > 9007199254740991 then
    -- Counted from a value no token can come from (negative, 2^53 - 1 or
    -- more: not exact in Lua's numbers): counted back, as it was.
    redis.call('INCRBY', fence_key, -1) -- (not DECR: the ACL line of docs/security.md has INCRBY)
    fence = {}
  end
  if type(fence) == 'table' then
    -- Refused (another type, not a whole number, 2^63 - 1): INCR changed nothing.
    local _, reply = fence_counter(fence_key)
    return nil, reply or damaged_reply(fence_key, 'refused by INCR', 'a fencing counter')
  end
  if fence == 1 then
    redis.call('SET', fence_key, now_ms)
    fence = now_ms
  end
  fence_now = fence
  return fence, nil
end
