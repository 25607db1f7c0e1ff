-- lib/clock.lua: the server's clock. A script that reads it and then writes
-- needs effects replication: switched on here, where every script that changes
-- something splices this in first (lib/deadline.lua); Redis 3.2-4 only, always
-- on from Redis 5.
if redis.replicate_commands then
  redis.replicate_commands()
end

-- Now in ms since the epoch: TIME, read once a script (a script runs at one
-- moment; one command less for each further use).
local script_now_ms = nil
local function server_ms()
  if not script_now_ms then
    local now = redis.call('TIME')
    script_now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  end
  return script_now_ms
end
