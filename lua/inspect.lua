-- inspect.lua: read the state of each lock, changing nothing, in every layout
-- rlock shares with Redisson: RLock / RFairLock (a hash of owners, plus a queue),
-- RReadWriteLock (a hash with 'mode', one lease key per reader level) and
-- RPermitExpirableSemaphore (a string of free permits, plus a sorted set of
-- permits and their lease ends).
--
-- KEYS    the names of the locks
-- ARGV    7 per lock, its companion keys in this order: the fair queue
--         (redisson_lock_queue:{NAME}), the queue's give-up times
--         (redisson_lock_timeout:{NAME}), rlock's waiter records
--         (rlock_waiters:{NAME}), the semaphore's permits ({NAME}:timeout),
--         rlock's permit records (rlock_permits:{NAME}), the reader lease key
--         prefix ({NAME}, or NAME when it has a '{': reader levels are
--         PREFIX:OWNER:rwlock_timeout:N) and the last completion of
--         `run --once-per` (rlock_done:{NAME}, see once_done.lua). They share NAME's hash slot; they are
--         passed as ARGV, like the reader keys Redisson's read lock makes on the
--         fly, so a read of one lock stays a one-key request, which a Cluster
--         serves even while the slot migrates (ASK), where a request naming a
--         missing key next to an existing one gets TRYAGAIN.
-- Returns one entry per lock: {type, pttl, fields, complete, queue, readers, permits, now, done}
--   type      'none' (free), 'hash', or another Redis type (a foreign key, or
--             'string' for a semaphore: see permits)
--   pttl      the key's PTTL (-1: no expiry, -2: none)
--   fields    for a hash: field, value, field, value... (owner tokens with their
--             counts, 'mode', records); {} for any other type
--   complete  1 when fields is the whole hash; 0 when the hash is too big to be
--             a lock and fields is {}
--   queue     fair waiters in order: owner, ms until its give-up time (false:
--             none), rlock's record of it ('' when none), ...
--   readers   for a read-write lock: owner, the PTTL of its longest-lived level
--             key (-2 when none is left), ... (fields whose value is a count)
--   permits   {} when NAME is no semaphore, else {available, holder, ms left
--             until its lease end, rlock's record ('' when none), ...}
--   now       the server's clock (ms since the epoch), for "waiting for" times
--   done      {} when there is no once-per record, else {raw, pttl}: raw is
--             '' when the key is not a string or is over 8192 bytes
--
-- Replies are capped, because SCAN brings any key here: a hash with more than
-- 256 fields, a field name over 1024 bytes or more than 64 KiB in all is not a
-- lock (complete 0, no fields); a value over 8192 bytes comes back as ''; at
-- most 256 waiters, readers (64 levels each) and permits are read.
local max_fields, max_name, max_value, max_total, max_items, max_levels = 256, 1024, 8192, 65536, 256, 64
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- A value of a hash of records, '' when absent or too long.
local function record(key, field)
  if #field > max_name or redis.call('HSTRLEN', key, field) > max_value then
    return ''
  end
  return redis.call('HGET', key, field) or ''
end

local out = {}
for i, name in ipairs(KEYS) do
  local queue, timeouts, waiters, permits, permit_records, prefix, done =
    ARGV[i * 7 - 6], ARGV[i * 7 - 5], ARGV[i * 7 - 4], ARGV[i * 7 - 3], ARGV[i * 7 - 2], ARGV[i * 7 - 1],
    ARGV[i * 7]
  local kind = redis.call('TYPE', name)['ok']
  local fields, complete, counts = {}, 1, {}
  if kind == 'hash' and redis.call('HLEN', name) > max_fields then
    complete = 0
  elseif kind == 'hash' then
    local total = 0
    for _, field in ipairs(redis.call('HKEYS', name)) do
      local size = redis.call('HSTRLEN', name, field)
      local value = ''
      if size <= max_value then
        value = redis.call('HGET', name, field)
      end
      total = total + #field + #value
      if #field > max_name or total > max_total then
        fields, complete, counts = {}, 0, {}
        break
      end
      fields[#fields + 1] = field
      fields[#fields + 1] = value
      if string.match(value, '^[1-9]%d?%d?%d?%d?%d?$') then
        counts[#counts + 1] = {field, tonumber(value)}
      end
    end
  end

  local waiting = {}
  if redis.call('TYPE', queue)['ok'] == 'list' then
    -- (give-up times or records of another type: none to show)
    local scored = redis.call('TYPE', timeouts)['ok'] == 'zset'
    local recorded = redis.call('TYPE', waiters)['ok'] == 'hash'
    for _, owner in ipairs(redis.call('LRANGE', queue, 0, max_items - 1)) do
      local score = scored and redis.call('ZSCORE', timeouts, owner)
      local info = ''
      if recorded then
        info = record(waiters, owner)
      end
      waiting[#waiting + 1] = owner
      waiting[#waiting + 1] = score and math.floor(tonumber(score) - now_ms) or false
      waiting[#waiting + 1] = info
    end
  end

  local readers = {}
  if kind == 'hash' and complete == 1 and redis.call('HEXISTS', name, 'mode') == 1 then
    for n, entry in ipairs(counts) do
      if n > max_items then
        break
      end
      local owner, levels, best = entry[1], math.min(entry[2], max_levels), -2
      for level = 1, levels do
        best = math.max(best, redis.call('PTTL', prefix .. ':' .. owner .. ':rwlock_timeout:' .. level))
      end
      readers[#readers + 1] = owner
      readers[#readers + 1] = best
    end
  end

  -- A semaphore: a string of free permits (a whole number, no expiry) and, while
  -- permits are out, the sorted set of them (the set goes with its last member).
  local semaphore = {}
  if kind == 'string' and redis.call('STRLEN', name) <= 20 then
    local available = redis.call('GET', name)
    local has_permits = redis.call('TYPE', permits)['ok'] == 'zset'
    if has_permits or (string.match(available, '^%-?%d+$') and redis.call('PTTL', name) == -1) then
      semaphore[1] = available
    end
    if has_permits then
      local has_records = redis.call('TYPE', permit_records)['ok'] == 'hash'
      local held = redis.call('ZRANGE', permits, 0, max_items - 1, 'WITHSCORES')
      for n = 1, #held, 2 do
        semaphore[#semaphore + 1] = held[n]
        semaphore[#semaphore + 1] = math.floor(tonumber(held[n + 1]) - now_ms)
        semaphore[#semaphore + 1] = has_records and record(permit_records, held[n]) or ''
      end
    end
  end

  local last_done = {}
  local done_kind = redis.call('TYPE', done)['ok']
  if done ~= name and done_kind ~= 'none' then
    local raw = ''
    if done_kind == 'string' and redis.call('STRLEN', done) <= max_value then
      raw = redis.call('GET', done)
    end
    last_done = {raw, redis.call('PTTL', done)}
  end

  out[i] = {kind, redis.call('PTTL', name), fields, complete, waiting, readers, semaphore, now_ms, last_done}
end
return out
