-- renew.lua: extend the lease of NAME if, and only if, the owner holds it.
-- Never creates a lock that has gone. With one level held the lease becomes
-- exactly the new one (it may shorten it: --hold-min relies on that); while
-- re-entered it is only ever lengthened. Sending it twice gives the same lease.
--
-- KEYS[1] lock name
-- ARGV[1] owner token
-- ARGV[2] new lease in ms (-L: the lease L, for a hold kept to that end with
--         no renewal after it, run --hold-min: recorded as kept_until_ms); '0' means the lease the lock was taken with: the
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s (Redisson's default lease). The record is data
--         anyone can write: this is the only use of it, and it is bounded.
-- @deadline ARGV[3]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, lease_ms}   renewed; lease_ms is the lease the key now has
--         {-1}            no such lock (expired, deleted)
--         {-2, holder}    held by another owner ('' when no owner field can be read)
--         {-3, type}      the key is not a lock hash
--         {-4, mode}      a Redisson read-write lock (mode 'read'/'write'): not
--                         renewed by a plain renew, whoever asks
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of the lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--
-- A renewal also sets renewed_at_ms (server time) in rlock's record
-- ('rlock:meta'), when there is one: when the holder last renewed; with the
-- history, it keeps one 'renewed' event of the hold (lib/history.lua), and a
-- renewal that finds the lock gone writes the ending the history lacks.
-- @include deadline.lua
local past_deadline = too_late(ARGV[3])
if past_deadline then
  return past_deadline
end

local name, owner, lease = KEYS[1], ARGV[1], tonumber(ARGV[2])
-- @include reserved.lua
-- @include holders.lua
-- @include renewal.lua
-- @include history.lua

local refusal = refused(owner)
if refusal then
  return refusal
end

local count, not_owned = owned_count(name, owner)
if not count then
  if not_owned[1] == -1 then
    log_gone_holds(server_ms()) -- it expired (or went) unseen: the history says how
  end
  return not_owned
end
local kept
lease, kept = renewal_argument(lease)
lease = renewal_lease(lease, name, 'rlock:meta')
-- A renewal that finds less than a third of the lease left came late (rlock
-- renews every third of it): logged, for a hold with rlock's record. A resend
-- finds the lease renewed and logs nothing.
if log_key and redis.call('HEXISTS', name, 'rlock:meta') == 1 then
  log_if_late(owner, redis.call('PTTL', name), lease)
end
local answer = renew_hash(name, tonumber(count) or 1, lease)
-- The record's renewed_at_ms, and the history's marker of this hold's last
-- renewal (its lease end, should it expire unseen).
note_renewal(name, 'rlock:meta', server_ms(), function(record)
  mark_renewal(record, owner, answer[2])
end, kept and answer[2])
return answer
