-- rw_release.lua: undo one level of an owner's read or write hold on the
-- read-write lock NAME (Redisson's RReadWriteLock layout, see rw_acquire.lua),
-- or every level.
--
-- As Redisson's read unlock: a reader's level key goes with its level; when
-- the reader's last level goes, its field and record go, and the hash's lease
-- becomes the longest lease left among the readers' level keys; when no
-- reader's key is alive (and no writer holds it) the hash is deleted and '0'
-- is published on redisson_rwlock:{NAME}.
-- As Redisson's write unlock: when the writer's last level goes, its field and
-- record go; the hash is deleted if nobody else is in it, else it becomes a
-- read lock of the writer's own readers (downgrade) with their lease; '1' is
-- published in both cases (Redisson publishes only on the delete: readers may
-- join after a downgrade too, so rlock wakes them then as well).
--
-- A request may arrive twice (its reply was lost and the client sent it again).
-- As in Redisson's unlock, applying it SETs the latch KEYS[3] (one per request)
-- to its answer for ARGV[4] ms, and a resend finds the latch and returns that
-- answer unchanged.
--
-- KEYS[1] lock name   KEYS[2] redisson_rwlock:{NAME}
-- KEYS[3] this request's latch: redisson_unlock_latch:{NAME}:OP (NAME's hash slot)
-- KEYS[4] (optional) an acquisition's latch, rlock_acquire_latch:{NAME}:OP: undo
--         that acquisition only, i.e. release one level only if the latch says
--         it was applied (acquired or re-entered), and drop the latch; otherwise
--         answer {-1} and change nothing
-- ARGV[1] owner token
-- ARGV[2] '1' to release every level, '0' for one
-- ARGV[3] 'PUBLISH', or 'SPUBLISH' in Redis Cluster 7+
-- ARGV[4] latch lifetime in ms
-- ARGV[5] 'read' or 'write'
-- ARGV[6] the reader lease keys' prefix: {NAME} (NAME when it holds a '{')
-- @deadline ARGV[7]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {n}            released; n levels of this side are still held by the
--                        owner (0: this side of its hold is gone)
--         {-1}           not held: no such lock, or (a reader) only other
--                        readers are in it
--         {-2, holder}   held by another owner: a writer (token without
--                        ':write'), or readers when a writer asks
--         {-3, type}     the key is not a lock hash (foreign): never touched
--         {-4, layout}   held in another layout: 'exclusive' (a plain RLock hash,
--                        no 'mode'), or the owner holds the other side ('read'
--                        or 'write'): never touched
--         error 'ERR rlock: owner token is empty or reserved'   as rw_acquire.lua
-- @include deadline.lua
local past_deadline = too_late(ARGV[7])
if past_deadline then
  return past_deadline
end

local name, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local owner, all, publish, latch_ms = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]
local side, prefix = ARGV[5], ARGV[6]
-- @include rw.lua
-- @include latch.lua
-- @include clock.lua
-- @include history.lua

-- KEYS[4] absent: the last key may be the history's (lib/history.lua).
local early = refused_side() or released(latch) or unapplied(KEYS[4] ~= log_key and KEYS[4] or nil)
if early then
  return early
end

local field = side == 'write' and owner .. ':write' or owner
local count, mode, not_owned = held_side(field)
if not count then
  if redis.call('EXISTS', name) == 0 then
    log_gone_holds(server_ms()) -- it expired (or went) unseen: the history says how
  end
  log_lost_if_asked(owner)
  return not_owned
end

local held = levels(count)
local left = all and 0 or held - 1
-- The history's released event, for a hold with rlock's record (Redisson's writes none).
local record = log_key and redis.call('HGET', name, side == 'write' and 'rlock:meta' or 'rlock:meta:' .. owner)
local function log_release()
  if record then
    log_event('released', owner, {'held_ms', held_ms(record, server_ms()) or -1, 'left', left})
    if left == 0 then
      unmark_record(owner, record) -- its last renewal's marker goes with the hold
    end
  end
  if redis.call('EXISTS', name) == 0 then
    -- Deleted: readers whose leases had run out (dead) were still in it.
    log_gone_holds(server_ms())
  end
end

-- Every change comes after the PUBLISH (if the user may not publish, an ACL
-- without the channel, the script fails before changing anything);
-- subscribers see the message only after the script has run.
if side == 'write' then
  if left > 0 then
    redis.call('HINCRBY', name, field, -1)
  else
    local lease = readers_lease(0)
    redis.call(publish, channel, '1')
    redis.call('HDEL', name, field, 'rlock:meta')
    if lease and lease <= 0 then
      redis.call('DEL', name)
    else
      -- The writer's own readers stay (downgrade): a read lock with their lease.
      redis.call('HSET', name, 'mode', 'read')
      if lease then
        redis.call('PEXPIRE', name, lease)
      end
    end
  end
  redis.call('SET', latch, left, 'PX', latch_ms)
  log_release()
  return {left}
end

-- side == 'read'. In the writer's hash (a downgrade) the lease is the
-- writer's: a reader never shortens it, and the hash stays.
local lease = nil
if mode ~= 'write' then
  lease = readers_lease(left)
  if lease and lease <= 0 then
    redis.call(publish, channel, '0')
  end
end
if left > 0 then
  redis.call('HINCRBY', name, field, -1)
  redis.call('DEL', level_key(owner, held))
else
  redis.call('HDEL', name, field, 'rlock:meta:' .. owner)
  for i = math.min(held, 10000), 1, -1 do
    redis.call('DEL', level_key(owner, i))
  end
end
if lease and lease > 0 then
  redis.call('PEXPIRE', name, lease)
elseif lease then
  redis.call('DEL', name)
end
redis.call('SET', latch, left, 'PX', latch_ms)
log_release()
return {left}
