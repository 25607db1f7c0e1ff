-- lib/history.lua: a lock's history (rlock history NAME): each state change
-- appends one event to the capped stream rlock_log:{NAME} (NAME's hash slot), in
-- the script that makes the change, so it costs no round trip and a change is
-- never logged without being made (or made twice: a resend that the script
-- answers from its latch or its token changes nothing and logs nothing).
--
-- The client asks for it by passing the log key as the LAST key and the event
-- context as the LAST argument; without them nothing is logged (Redisson's
-- scripts, an older rlock, RLOCK_HISTORY=off). A script whose own trailing keys
-- or arguments are optional checks them against log_key / log_ctx.
--
-- The context is a JSON array made by the client (lock/history.cpp):
--   [max length, lifetime ms, field, value, field, value, ...]
-- (host, pid, cmd, ver, and what only the client knows: mode, waited_ms,
-- verdict, ...). Appending never fails the script: the stream commands are
-- called through redis.pcall (a server without streams, a key of another type,
-- an ACL without xadd: the change is made, the event is not).
local log_key, log_ctx = nil, nil
if #KEYS > 1 and #ARGV > 0 and string.sub(KEYS[#KEYS], 1, 10) == 'rlock_log:' then
  log_key, log_ctx = KEYS[#KEYS], ARGV[#ARGV]
end

-- Appends the event `kind` of `owner` with the script's own fields (a flat
-- list: field, value, ...) after the client's. Nothing without a log key or
-- with a context that is not ours.
local function log_event(kind, owner, fields)
  if not log_key then
    return
  end
  local ok, ctx = pcall(cjson.decode, log_ctx)
  if not ok or type(ctx) ~= 'table' then
    return
  end
  local max, ttl = tonumber(ctx[1]), tonumber(ctx[2])
  if not max or max < 1 or not ttl or ttl < 1 then
    return
  end
  local args = {log_key, 'MAXLEN', '~', string.format('%d', max), '*', 'kind', kind, 'owner', owner or ''}
  for i = 3, #ctx - 1, 2 do
    args[#args + 1] = tostring(ctx[i])
    args[#args + 1] = tostring(ctx[i + 1])
  end
  for i = 1, #(fields or {}) - 1, 2 do
    args[#args + 1] = fields[i]
    local value = fields[i + 1]
    args[#args + 1] = type(value) == 'number' and string.format('%.0f', value) or tostring(value)
  end
  local added = redis.pcall('XADD', unpack(args))
  if type(added) == 'string' then
    redis.pcall('PEXPIRE', log_key, string.format('%d', ttl))
  end
end

-- A renewal that finds less than a third of the lease left (`left` ms, of
-- `lease`) came late (rlock renews every third of it): logged as renewed-late.
-- Called before the renewal, for a hold with rlock's record only; a resend
-- finds the lease renewed and logs nothing.
local function log_if_late(owner, left, lease)
  if log_key and left and left >= 0 and lease and left < lease / 3 then
    log_event('renewed-late', owner, {'left_ms', left, 'lease_ms', lease})
  end
end

-- How long the hold whose raw record is `raw` ('rlock:meta') has been held at
-- now_ms; nil without a usable acquired_at_ms.
local function held_ms(raw, now_ms)
  if not raw or #raw > 8192 then
    return nil
  end
  local ok, record = pcall(cjson.decode, raw)
  if ok and type(record) == 'table' and type(record.acquired_at_ms) == 'number' then
    return math.max(0, now_ms - record.acquired_at_ms)
  end
  return nil
end
