-- permit_release.lua: undo one level of an owner's permit of NAME (--limit N),
-- or every level; at zero the permit returns to NAME, its holder record goes,
-- and the new count of free permits is published on redisson_sc:{NAME}, as
-- Redisson's release does, so Redisson's and rlock's waiters wake.
--
-- Layout as in permit_acquire.lua: NAME = free permits (string), {NAME}:timeout
-- = permit id (owner token) -> lease end in ms, rlock_permits:{NAME} = owner ->
-- holder record (JSON; its 'count' = re-entry levels, 1 when unreadable).
-- Expired permits are given back first (as every Redisson script does).
--
-- A request may arrive twice (its reply was lost and the client sent it again).
-- As release.lua, applying it SETs the latch KEYS[5] (one per request) to its
-- answer for ARGV[4] ms, and a resend finds the latch and returns that answer.
--
-- KEYS[1] NAME (free permits)          KEYS[2] {NAME}:timeout (permit leases)
-- KEYS[3] redisson_sc:{NAME} (channel) KEYS[4] rlock_permits:{NAME} (holder records)
-- KEYS[5] this request's latch: redisson_unlock_latch:{NAME}:OP
-- KEYS[6] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
-- @deadline ARGV[5]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {n, free}      released; n levels are still held by the owner (0: the
--                        permit returned, and `free` permits were published)
--         {-1}           the owner holds no permit and nobody else does, its
--                        permit expired (given back just now), or there is no
--                        semaphore (NAME deleted: permits left in the set are
--                        void; the owner's is removed)
--         {-2, holder}   the owner holds no permit; `holder` holds one
--         {-3, type}     NAME is a key of another type (or a string that is not
--                        a count): never touched
--         {-4, layout}   NAME is a lock hash ('exclusive', or Redisson's
--                        read-write 'read' / 'write'): not released here
--         error 'ERR rlock: owner token is empty or reserved'   '' or a token that
--                 could name a field of a lock's own record ('rlock:...', 'mode'):
--                 nothing changed
--         error 'DAMAGED the key KEY is ...'   the permits' leases or their
--                 records hold another type: nothing changed (lib/damaged.lua)
-- @include deadline.lua
local past_deadline = too_late(ARGV[5])
if past_deadline then
  return past_deadline
end

local name, timeouts, channel, records, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]
-- @include reserved.lua
-- @include latch.lua
-- @include clock.lua
-- @include permits.lua
-- @include history.lua

local kind, free = semaphore()
-- KEYS[6] absent: the last key may be the history's (lib/history.lua).
local early = refused(owner) or latched(latch, 2) or permits_damaged() or
                  unapplied(KEYS[6] ~= log_key and KEYS[6] or nil) or other_layout(kind, free)
if early then
  return early
end
if kind == 'none' then
  -- No semaphore (NAME deleted, e.g. by force-unlock): any permit left in
  -- the set is void; the owner's is tidied away.
  redis.call('ZREM', timeouts, owner)
  redis.call('HDEL', records, owner)
  return {-1}
end

-- Expired permits go back first, as every Redisson script does.
local mine_expired
free, mine_expired = give_back_expired(free, server_ms())

if not redis.call('ZSCORE', timeouts, owner) then
  return no_permit(mine_expired)
end

-- Levels held: the record's count (it is data: 1 when unreadable).
local record = record_of(owner)
local count = levels(record)

local left = all and 0 or count - 1
-- The history's released event, for a permit with rlock's record.
local raw = log_key and redis.call('HGET', records, owner)
if left > 0 then
  record.count = left
  redis.call('HSET', records, owner, cjson.encode(record))
else
  -- Publish first: if the user may not publish (an ACL without the channel),
  -- the script fails before changing anything.
  free = free + 1
  redis.call(publish, channel, free)
  redis.call('ZREM', timeouts, owner)
  redis.call('HDEL', records, owner)
  redis.call('INCRBY', name, 1)
end
redis.call('SET', latch, string.format('%d %d', left, free), 'PX', latch_ms)
if raw then
  log_event('released', owner, {'held_ms', held_ms(raw, server_ms()) or -1, 'left', left})
end
return {left, free}
