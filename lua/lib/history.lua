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
-- verdict, ...). The pairs 'as', KIND and 'as_why', WHY turn a 'released'
-- event into KIND with 'why' WHY (a run that lost its lock and exits 76
-- releases as 'lost'); the script's other events get neither. Appending never fails
-- the script: the stream commands are called through redis.pcall (a server
-- without streams, a key of another type, an ACL without xadd: the change is
-- made, the event is not).
--
-- How each hold ended (issue 30): a hold whose key has gone without an ending
-- in the history (released, lost, force-unlocked) expired, or was deleted
-- behind rlock's back; the first script that finds so writes that ending for
-- it ('expired' or 'gone', see log_gone_holds), with the time it could have
-- ended: its last renewal plus its lease. For that, each renewal keeps one
-- 'renewed' event per hold (a marker: the previous one is deleted, its id is
-- in the holder's record as log_mark), and the final release deletes it.
-- @include clock.lua
-- @include record.lua
local log_key, log_ctx = nil, nil
if #KEYS > 1 and #ARGV > 0 and string.sub(KEYS[#KEYS], 1, 10) == 'rlock_log:' then
  log_key, log_ctx = KEYS[#KEYS], ARGV[#ARGV]
end

-- The client's context decoded (once a script: false when it cannot be):
-- max length, lifetime, its field pairs (a flat list) and its 'as' (nil:
-- none); nil when there is no log key or the context is not ours.
local decoded_context = nil
local function history_context()
  if decoded_context ~= nil then
    return decoded_context or nil
  end
  decoded_context = false
  if not log_key then
    return nil
  end
  local ok, ctx = pcall(cjson.decode, log_ctx)
  if not ok or type(ctx) ~= 'table' then
    return nil
  end
  local max, ttl = tonumber(ctx[1]), tonumber(ctx[2])
  if not max or max < 1 or not ttl or ttl < 1 then
    return nil
  end
  local pairs_, as, as_why = {}, nil, nil
  for i = 3, #ctx - 1, 2 do
    local field, value = tostring(ctx[i]), tostring(ctx[i + 1])
    if field == 'as' then
      as = value
    elseif field == 'as_why' then
      as_why = value
    else
      pairs_[#pairs_ + 1] = field
      pairs_[#pairs_ + 1] = value
    end
  end
  decoded_context = {max = max, ttl = ttl, pairs = pairs_, as = as, as_why = as_why}
  return decoded_context
end

-- Appends the event `kind` of `owner` with `who` (a flat list: field, value,
-- ...; the client's context pairs when nil) and `fields` after it. Returns the
-- entry's id, or nil when nothing was appended.
local function append(kind, owner, who, fields)
  local ctx = history_context()
  if not ctx then
    return nil
  end
  local args = {log_key, 'MAXLEN', '~', string.format('%d', ctx.max), '*', 'kind', kind, 'owner', owner or ''}
  local list = who or ctx.pairs
  for i = 1, #list - 1, 2 do
    args[#args + 1] = list[i]
    args[#args + 1] = list[i + 1]
  end
  if not who and ctx.as and kind == ctx.as and ctx.as_why then
    args[#args + 1] = 'why'
    args[#args + 1] = ctx.as_why
  end
  for i = 1, #(fields or {}) - 1, 2 do
    args[#args + 1] = fields[i]
    local value = fields[i + 1]
    args[#args + 1] = type(value) == 'number' and string.format('%.0f', value) or tostring(value)
  end
  local added = redis.pcall('XADD', unpack(args))
  if type(added) ~= 'string' then
    return nil
  end
  redis.pcall('PEXPIRE', log_key, string.format('%d', ctx.ttl))
  return added
end

-- Appends the event `kind` of `owner` with the script's own fields (a flat
-- list: field, value, ...) after the client's. Nothing without a log key or
-- with a context that is not ours. A 'released' the client asked to be
-- another kind ('as': 'lost') is that kind.
local function log_event(kind, owner, fields)
  local ctx = history_context()
  if ctx and kind == 'released' and ctx.as then
    kind = ctx.as
  end
  append(kind, owner, nil, fields)
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

-- The fields of a stream entry as a table (the first of each name).
local function entry_fields(entry)
  local out = {}
  local list = type(entry) == 'table' and entry[2]
  if type(list) == 'table' then
    for i = 1, #list - 1, 2 do
      if out[list[i]] == nil then
        out[list[i]] = list[i + 1]
      end
    end
  end
  return out
end

-- Whether the owner's newest hold already has its ending in the history: a
-- force-unlock, or its own 'released' (of the last level), 'expired', 'gone' or
-- 'lost', newer than its 'acquired'. Read from the newest event back, at most
-- 64 events (none of them: not ended).
local function hold_ended(owner)
  if not log_key then
    return false
  end
  local entries = redis.pcall('XREVRANGE', log_key, '+', '-', 'COUNT', 64)
  if type(entries) ~= 'table' or entries.err then
    return false
  end
  for _, entry in ipairs(entries) do
    local f = entry_fields(entry)
    if f.kind == 'force-unlocked' then
      return true
    end
    if f.owner == owner then
      if f.kind == 'acquired' then
        return false
      end
      if f.kind == 'expired' or f.kind == 'gone' or f.kind == 'lost' or (f.kind == 'released' and f.left == '0') then
        return true
      end
    end
  end
  return false
end

-- The owner's hold lost (a run that exits 76): its ending 'lost', unless the
-- history already ended it (force-unlocked, or the 'gone' or 'expired' a script
-- wrote when it found the key over): one ending per hold (issue 41).
local function log_lost(owner, fields)
  if not hold_ended(owner) then
    append('lost', owner, nil, fields)
  end
end

-- The owner's hold ended in a way its release cannot say (a release or a
-- renewal that finds it gone or another's): when the client asked for the
-- ending 'as' 'lost' (a run that exits 76), that event, with its 'why'
-- (log_lost: not when the history has its ending already).
local function log_lost_if_asked(owner)
  local ctx = history_context()
  if ctx and ctx.as == 'lost' then
    log_lost(owner, {})
  end
end

-- Deletes the owner's renewal marker `id` (a record's log_mark: data, so only
-- when that entry is a 'renewed' event of this owner).
local function unmark(owner, id)
  if not log_key or type(id) ~= 'string' or #id > 64 or not string.match(id, '^%d+%-%d+$') then
    return
  end
  local found = redis.pcall('XRANGE', log_key, id, id)
  if type(found) == 'table' and found[1] then
    local fields = entry_fields(found[1])
    if fields.kind == 'renewed' and fields.owner == owner then
      redis.pcall('XDEL', log_key, id)
    end
  end
end

-- A renewal of the hold whose decoded record is `record` (note_renewal's
-- `also`): its marker, a 'renewed' event with the lease it now has, replaces
-- the previous one; its id goes into the record.
local function mark_renewal(record, owner, lease)
  if not log_key then
    return
  end
  unmark(owner, record.log_mark)
  record.log_mark = append('renewed', owner, nil, {'lease_ms', lease})
end

-- The hold's marker, once the hold has ended (its last level released): gone
-- with it. `raw` is its raw record.
local function unmark_record(owner, raw)
  -- (most holds are never renewed: no marker, nothing to decode)
  local record = log_key and raw and string.find(raw, '"log_mark"', 1, true) and decode_record(raw)
  if record then
    unmark(owner, record.log_mark)
  end
end

-- The holds the history has open (an 'acquired' with no ending after it):
-- owner -> {at = when acquired, fields = the acquired event's, point = the time
-- of its newest event that set its lease, lease = that lease}. Read from the
-- newest event back, at most 64 events; an exclusive hold's 'acquired' or
-- ending (mode other than shared or limit) or a force-unlock ends the search:
-- nothing older can still be held (when an exclusive hold was taken, the
-- history had no hold open: its acquisition ended them first; while it was
-- held, nobody else could take it). `only`: just this owner's.
local function open_holds(only)
  local holds = {}
  if not log_key then
    return holds
  end
  local closed, points = {}, {}
  -- First the newest one: the usual case, an exclusive hold's release (which
  -- says its mode, issue 45), ends the search there.
  local from, budget, page = '+', 64, 1
  while budget > 0 do
    local entries = redis.pcall('XREVRANGE', log_key, from, '-', 'COUNT', page + (from == '+' and 0 or 1))
    if type(entries) ~= 'table' or entries.err or #entries == 0 then
      return holds
    end
    local got = 0
    for _, entry in ipairs(entries) do
      if from == '+' or entry[1] ~= from then
        got = got + 1
        budget = budget - 1
        local f = entry_fields(entry)
        local kind, who = f.kind, f.owner
        local at = tonumber(string.match(entry[1], '^(%d+)'))
        if kind == 'force-unlocked' then
          return holds
        elseif kind == 'expired' or kind == 'gone' or kind == 'lost' or (kind == 'released' and f.left == '0') then
          if who then
            closed[who] = true
          end
          if f.mode and f.mode ~= 'shared' and f.mode ~= 'limit' then
            return holds -- an exclusive hold's ending: nothing older can still be held
          end
        elseif who and not closed[who] then
          local lease = tonumber(f.lease_ms)
          if lease and not points[who] and (kind == 'renewed' or kind == 're-entered' or kind == 'renewed-late' or
              kind == 'acquired') then
            points[who] = {at, lease}
          end
          if kind == 'acquired' then
            closed[who] = true
            local point = points[who] or {}
            if at and (not only or who == only) then
              holds[who] = {at = at, fields = f, point = point[1], lease = point[2]}
            end
          end
        end
        if kind == 'acquired' and f.mode ~= 'shared' and f.mode ~= 'limit' then
          return holds -- an exclusive hold, ended or not: nothing older can still be held
        end
        if budget <= 0 then
          return holds
        end
      end
    end
    if got < page then
      return holds
    end
    from = entries[#entries][1]
    page = 16
  end
  return holds
end

-- The ending of the open hold `hold` of `owner`, with the hold's own host,
-- pid, cmd, ver and mode: 'expired' when its lease could have ended by now_ms
-- (ended_at_ms: its newest renewal, re-entry or acquisition plus the lease it
-- set; held_ms: from its acquisition to then), else 'gone' (deleted, or lost
-- by the server, before its lease end, lease_end_at_ms: not by rlock).
-- `ended_at`: the time, when the caller knows it (a permit's lease end).
local function log_ending(owner, hold, now_ms, ended_at)
  local ended = ended_at or (hold.point and hold.lease and hold.point + hold.lease)
  if not ended then
    return
  end
  local who = {}
  for _, field in ipairs({'host', 'pid', 'cmd', 'ver', 'mode'}) do
    if hold.fields[field] then
      who[#who + 1] = field
      who[#who + 1] = hold.fields[field]
    end
  end
  -- (5 ms: the marker's time and the lease's start are read apart in one script)
  if ended <= now_ms + 5 then
    append('expired', owner, who, {'ended_at_ms', ended, 'held_ms', math.max(0, ended - hold.at)})
  else
    -- When it went is not known: after its last renewal, before now.
    append('gone', owner, who, {'lease_end_at_ms', ended})
  end
end

-- Called when NAME holds nobody any more (the key is gone, or the script has
-- just deleted it): every hold the history still has open ended without a
-- word; each gets its ending (log_ending). Nothing without a log key.
local function log_gone_holds(now_ms)
  if not log_key then
    return
  end
  for owner, hold in pairs(open_holds(nil)) do
    log_ending(owner, hold, now_ms, nil)
  end
end

-- A permit whose lease ended at `ended_at` was given back by a script: its
-- hold, if the history has it open, expired then.
local function log_permit_expired(owner, ended_at, now_ms)
  if not log_key then
    return
  end
  local hold = open_holds(owner)[owner]
  if hold then
    log_ending(owner, hold, now_ms, ended_at)
  end
end
