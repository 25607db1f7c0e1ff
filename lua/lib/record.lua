-- lib/record.lua: rlock's holder records (JSON beside a hold: 'rlock:meta' of a
-- lock hash, 'rlock:meta:OWNER' of a reader, rlock_permits:{NAME} of a permit,
-- rlock_waiters:{NAME} of a fair waiter). A record is data anyone can write:
-- only bounded values of it are ever used.

-- The record of a fresh hold: who took it (ARGV[at] .. ARGV[at + 3]: host, pid,
-- command, rlock version; ARGV[process_at], ARGV[process_at + 1]: the host's
-- boot id and the process's start time in clock ticks after boot, each left
-- out when '' or absent), when (now_ms), its lease and fencing token, and, when
-- `count` is given, its re-entry levels (a permit's); `turns`: its release
-- names the plain waiters' turns (lib/turns.lua: they need not listen on the
-- release channel). Uses the script local process_at.
local function holder_record(at, now_ms, lease, fence, count, turns)
  local record = {
    host = ARGV[at], pid = tonumber(ARGV[at + 1]), command = ARGV[at + 2], version = ARGV[at + 3],
    acquired_at_ms = now_ms, ttl_ms = lease, fence = fence,
  }
  local boot, start = ARGV[process_at], tonumber(ARGV[process_at + 1] or '')
  if boot and boot ~= '' then
    record.boot_id = boot
  end
  if start then
    record.start_ticks = start
  end
  if count then
    record.count = count
  end
  if turns then
    record.turns = 1
  end
  return cjson.encode(record)
end

-- A raw record decoded: a table; nil when absent, over 8 KiB or not a JSON
-- object or array.
local function decode_record(raw)
  if not raw or #raw > 8192 then
    return nil
  end
  local ok, record = pcall(cjson.decode, raw)
  if ok and type(record) == 'table' then
    return record
  end
  return nil
end

-- The lease a hold was taken with, from its decoded record (or nil): its ttl_ms
-- when that is a number of at least 1 (whole ms, at most 365 days), else 30s
-- (Redisson's default lease).
local function recorded_lease(record)
  local ttl = record and record.ttl_ms
  if type(ttl) == 'number' and ttl >= 1 then -- (NaN is not >= 1)
    return math.min(math.floor(ttl), 31536000000)
  end
  return 30000
end

-- Applies `change` to the record of field `field` of the hash `key` and writes
-- it back; a record that is absent, not a JSON object, over 8 KiB or that
-- cannot be encoded again is left as it is.
local function update_record(key, field, change)
  local raw = redis.call('HGET', key, field)
  if not raw or string.sub(raw, 1, 1) ~= '{' then
    return
  end
  local record = decode_record(raw)
  if not record then
    return
  end
  change(record)
  local ok, encoded = pcall(cjson.encode, record)
  if ok then
    redis.call('HSET', key, field, encoded)
  end
end

-- A renewal's lease argument (ms): a negative one, -L, sets the lease L to
-- keep the hold to a fixed end with no renewal after it (run --hold-min once
-- CMD has ended). Returns the lease and whether it is such a hold.
local function renewal_argument(lease)
  if lease and lease < 0 then
    return -lease, true
  end
  return lease, false
end

-- Notes a renewal in the holder record, field `field` of the hash `key`: its
-- renewed_at_ms becomes now_ms (server time), written back in the same script
-- as the renewal (no extra round trip); `also(record)`, when given, changes it
-- too (the history's renewal marker). `kept_ms`, for a hold kept to a fixed
-- end (renewal_argument), sets kept_until_ms to now_ms + kept_ms (status shows
-- it held until then, not a heartbeat that stopped); any other renewal
-- removes it. A record that is absent, not a JSON object, over 8 KiB or that
-- cannot be written back is left as it is (Redisson's holds have none).
local function note_renewal(key, field, now_ms, also, kept_ms)
  update_record(key, field, function(record)
    record.renewed_at_ms = now_ms
    record.kept_until_ms = kept_ms and now_ms + kept_ms or nil
    if also then
      also(record)
    end
  end)
end

-- A re-entry by a process that renews the hold (rlock run), in the same script
-- as the re-entry: the record of field `field` of the hash `key` names that
-- process (ARGV[at] .. ARGV[at + 3] and ARGV[process_at], ARGV[process_at + 1],
-- as holder_record reads them), so `force-unlock --if-dead` judges the process
-- that keeps the lock alive, not one that took it and exited (a plain
-- `acquire`). What the hold is keeps: acquired_at_ms, fence; ttl_ms becomes the
-- longer of the two leases (a renewal within it is proof of life);
-- renewed_at_ms becomes now_ms. A record that is absent (Redisson's holds:
-- naming an rlock process would let --if-dead remove a live Java holder once
-- that process ends), not a JSON object, over 8 KiB or that cannot be written
-- back is left as it is. Uses the script local process_at.
local function name_renewer(key, field, at, now_ms, lease)
  update_record(key, field, function(record)
    record.host, record.pid, record.command, record.version = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2], ARGV[at + 3]
    local boot, start = ARGV[process_at], tonumber(ARGV[process_at + 1] or '')
    record.boot_id = (boot and boot ~= '') and boot or nil
    record.start_ticks = start
    if type(record.ttl_ms) ~= 'number' or not (record.ttl_ms >= lease) then
      record.ttl_ms = lease
    end
    record.renewed_at_ms = now_ms
  end)
end
