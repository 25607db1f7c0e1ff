-- rw_renew.lua: extend the lease of an owner's read or write hold on the
-- read-write lock NAME (Redisson's RReadWriteLock layout, see rw_acquire.lua)
-- if, and only if, the owner holds that side. Never creates a hold that has
-- gone. With one level held the lease becomes exactly the new one (it may
-- shorten it: --hold-min relies on that); while re-entered it is only ever
-- lengthened. Sending it twice gives the same lease.
--
-- Writer: the hash's PEXPIRE, as renew.lua does for a plain lock.
-- Reader: every level key of the owner gets the lease (a level key that has
-- gone while the field stayed is set again: the field proves the hash has been
-- a read lock, or this owner's write lock, all along, so no writer got in), as
-- Redisson's read-lock renewal does; then the hash's lease becomes the longest
-- of all readers' level keys (in the writer's hash, a downgrade, it is only
-- ever lengthened: the writer's lease is its own).
--
-- KEYS[1] lock name
-- ARGV[1] owner token
-- ARGV[2] new lease in ms (-L: kept to that end, as renew.lua's); '0' means the lease the hold was taken with: its
--         record's ttl_ms when it is a number of at least 1 (whole ms, at most
--         365 days), else 30s (Redisson's default lease)
-- ARGV[3] 'read' or 'write'
-- ARGV[4] the reader lease keys' prefix: {NAME} (NAME when it holds a '{')
-- @deadline ARGV[5]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, lease_ms}   renewed; lease_ms: the lease the hold now has (the
--                         hash's for a writer, the longest of the owner's level
--                         keys for a reader)
--         {-1}            not held: no such lock, or (a reader) the owner's
--                         field has gone while other readers are in it
--         {-2, holder}    held by another owner (a writer's token without
--                         ':write'; readers when a writer asks)
--         {-3, type}      the key is not a lock hash
--         {-4, layout}    'exclusive' (a plain RLock hash), or the owner holds
--                         the other side ('read' or 'write')
--         error 'ERR rlock: owner token is empty or reserved'   as rw_acquire.lua
--
-- A renewal also sets renewed_at_ms (server time) in the holder's rlock
-- record ('rlock:meta' of a writer, 'rlock:meta:OWNER' of a reader), when there
-- is one: when the holder last renewed.
-- @include deadline.lua
local past_deadline = too_late(ARGV[5])
if past_deadline then
  return past_deadline
end

local name, owner, lease, side, prefix = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
-- @include rw.lua
-- @include renewal.lua
-- @include history.lua

local refusal = refused_side()
if refusal then
  return refusal
end

local field = side == 'write' and owner .. ':write' or owner
local meta_field = side == 'write' and 'rlock:meta' or 'rlock:meta:' .. owner

local count, mode, not_owned = held_side(field)
if not count then
  if redis.call('EXISTS', name) == 0 then
    log_gone_holds(server_ms()) -- it expired (or went) unseen: the history says how
  end
  return not_owned
end
local kept
lease, kept = renewal_argument(lease)
lease = renewal_lease(lease, name, meta_field)
-- The record's renewed_at_ms, and the history's marker of this hold's last
-- renewal with the lease it now has (lib/history.lua).
local function noted(answer)
  note_renewal(name, meta_field, server_ms(), function(record)
    mark_renewal(record, owner, answer[2])
  end, kept and answer[2])
  return answer
end
local held = levels(count)
-- renewed-late (lib/history.lua): the writer's lease is the hash's, a reader's
-- its newest level key's.
if log_key and redis.call('HEXISTS', name, meta_field) == 1 then
  log_if_late(owner, redis.call('PTTL', side == 'write' and name or level_key(owner, held)), lease)
end

if side == 'write' then
  return noted(renew_hash(name, held, lease))
end

-- side == 'read'
local own = lease
for i = math.min(held, 10000), 1, -1 do
  local key = level_key(owner, i)
  local current = redis.call('PTTL', key)
  if held > 1 and current >= lease then
    own = math.max(own, current)
  else
    redis.call('SET', key, 1, 'PX', lease)
  end
end

-- The hash lives as long as the longest level key of any reader.
local longest = nil
if mode == 'read' then
  longest = readers_lease(held)
end
if longest and longest >= own then
  redis.call('PEXPIRE', name, longest)
elseif redis.call('PTTL', name) < own then
  redis.call('PEXPIRE', name, own)
end
return noted({1, own})
