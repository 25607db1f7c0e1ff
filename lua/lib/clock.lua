-- lib/clock.lua: the server's clock. A script that reads it and then writes
-- needs effects replication (redis.replicate_commands() first, on Redis 3.2-4).

-- Now in ms since the epoch (TIME).
local function server_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
