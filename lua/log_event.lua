-- log_event.lua: appends an event only the client knows of (a lease it lost, a
-- run it skipped) to NAME's history, the stream rlock_log:{NAME}. Sent once,
-- best effort, never resent (a lost reply may leave the event in or out), and
-- never on the path that keeps a lock safe. See lib/history.lua.
--
-- KEYS[1] lock name (routing only)   KEYS[2] rlock_log:{NAME}
-- ARGV[1] the event kind   ARGV[2] owner token   ARGV[4] (the last) the context (lib/history.lua)
-- @deadline ARGV[3]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns 1 appended (or the stream could not take it: best effort), 0 nothing to do.
-- @include history.lua

-- @include deadline.lua
local past_deadline = too_late(ARGV[3])
if past_deadline then
  return past_deadline
end

if not log_key then
  return 0
end
if ARGV[1] == 'lost' then
  log_lost(ARGV[2], {}) -- one ending per hold: not after its force-unlock, 'gone' or 'expired'
else
  log_event(ARGV[1], ARGV[2], {})
end
return 1
