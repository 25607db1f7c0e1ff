-- lib/deadline.lua: a request rlock has given up on never takes effect (issue 34).
--
-- A request can reach the server long after rlock sent it: written into a
-- partition and delivered when it heals, held by a paused server, or slowed
-- on its way. By then rlock may have given up on it and exited, and running
-- it would make a lock held by no live process, a queue place nobody keeps, a
-- completion counted late. So each script that changes something takes a
-- deadline on the server's own clock, which rlock works out from what TIME
-- told it (src/rlock/redis/server_clock.hpp: the latest the server's clock can
-- read while rlock still waits for the reply), and checks it first, before it
-- reads or writes anything else.
--
-- The answer to a request past its deadline is an error reply
--   LATE rlock: ran at server time <now>, after its deadline <deadline>: nothing changed
-- It changed nothing, so it is the same whenever it is sent again late; a
-- resend that comes in time is answered as the request's first send would be
-- (its latch, its own token; the scripts' usual resend rules). rlock reads the
-- server's time in it (its clock estimate was wrong: a stepped server clock,
-- or a first request timed by this host's wall clock) and sends it again.
--
-- The deadline is optional: a whole number of ms in the script's deadline
-- argument ("-- @deadline ARGV[N]" in its header); absent, '' or anything else
-- (Redisson's calls, tests, an older rlock): no check.
-- @include clock.lua

-- The LATE error reply when `deadline` is a deadline the server's clock has
-- passed; nil otherwise.
local function too_late(deadline)
  if type(deadline) ~= 'string' or #deadline > 15 or not string.match(deadline, '^%d+$') then
    return nil
  end
  local now = server_ms()
  if now > tonumber(deadline) then
    return redis.error_reply(string.format(
        'LATE rlock: ran at server time %.0f, after its deadline %s: nothing changed', now, deadline))
  end
  return nil
end
