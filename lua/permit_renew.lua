-- permit_renew.lua: move the lease end of an owner's permit of NAME (--limit N)
-- if, and only if, the owner still holds it. Never gives back a permit that
-- has gone (expired, released, removed). With one level held the lease becomes
-- exactly the new one (it may shorten it: --hold-min relies on that); while
-- re-entered it is only ever lengthened. Sending it twice gives the same lease.
--
-- Layout as in permit_acquire.lua: NAME = free permits (string), {NAME}:timeout
-- = permit id (owner token) -> lease end in ms (server time), rlock_permits:{NAME}
-- = owner -> holder record (JSON). Expired permits are given back first (as
-- every Redisson script does: the free count is published when positive).
--
-- KEYS[1] NAME (free permits)          KEYS[2] {NAME}:timeout (permit leases)
-- KEYS[3] redisson_sc:{NAME} (channel) KEYS[4] rlock_permits:{NAME} (holder records)
-- ARGV[1] owner token
-- ARGV[2] new lease in ms (-L: kept to that end, as renew.lua's); '0' means the lease the permit was taken with: the
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s. The record is data anyone can write: bounded.
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- @deadline ARGV[4]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- A renewal also sets renewed_at_ms (server time) in the permit's record, when
-- there is one: when the holder last renewed.
--
-- Returns {1, lease_ms}   renewed; the permit's lease now ends lease_ms from now
--         {-1}            the owner's permit is gone (expired, released, removed)
--                         and nobody else holds one, or there is no semaphore
--                         (NAME deleted, e.g. by force-unlock: its permits are void)
--         {-2, holder}    the owner holds no permit; `holder` holds one
--         {-3, type}      NAME is a key of another type: never touched
--         {-4, layout}    NAME is a lock hash ('exclusive', 'read', 'write')
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of a lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--         error 'DAMAGED the key KEY is ...'   the permits' leases or their
--                 records hold another type: nothing changed (lib/damaged.lua)
-- @include deadline.lua
local past_deadline = too_late(ARGV[4])
if past_deadline then
  return past_deadline
end

local name, timeouts, channel, records = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]
-- @include reserved.lua
-- @include clock.lua
-- @include permits.lua
-- @include history.lua

local kind, free = semaphore()
local early = refused(owner) or other_layout(kind, free) or permits_damaged()
if early then
  return early
end
if kind == 'none' then
  return {-1} -- no semaphore (NAME deleted, e.g. by force-unlock): its permits are void
end

local now_ms = server_ms()

-- Expired permits go back first, as every Redisson script does.
local _, mine_expired = give_back_expired(free, now_ms)

local lease_end = tonumber(redis.call('ZSCORE', timeouts, owner))
if not lease_end then
  return no_permit(mine_expired)
end

local record = record_of(owner)
local count = levels(record)
local kept
lease, kept = renewal_argument(lease)
if lease == 0 then
  lease = recorded_lease(record)
end
-- When this permit holder last renewed (and, kept to a fixed end, until when).
local kept_ms = nil
if kept then
  kept_ms = (count > 1 and lease_end - now_ms >= lease) and lease_end - now_ms or lease
end
note_renewal(records, owner, now_ms, nil, kept_ms)
if record then
  log_if_late(owner, lease_end - now_ms, lease) -- lib/history.lua
end

-- While the permit is re-entered (a nested run inside a run), one level's
-- renewal must never shorten the lease another level relies on: only lengthen it.
if count > 1 and lease_end - now_ms >= lease then
  return {1, lease_end - now_ms}
end
redis.call('ZADD', timeouts, now_ms + lease, owner)
if redis.call('EXISTS', records) == 1 and redis.call('PTTL', records) < lease then
  redis.call('PEXPIRE', records, lease)
end
return {1, lease}
