-- once_done.lua: `run --once-per`: record that the job NAME guards was done in
-- the current window, by the holder, while it still holds the lock.
--
-- Windows are consecutive DUR-long intervals since the Unix epoch on this
-- server's clock (TIME): the record is for the window CMD ended in (ARGV[9],
-- else the one `now` falls in), and it
-- expires 30 days after that window's end (PEXPIREAT), so `rlock check
-- --done-within` still finds the last completion after its window ended (a
-- nightly job's record is read on the next day before the job runs again).
-- A record of an earlier window never counts as done in this one. It is written only while `owner`
-- holds the plain lock hash NAME (RLock or RFairLock layout): a holder that lost
-- the lock records nothing. `run` sends it after CMD exited 0 and before it
-- releases, so no other host can take the lock in between and miss the record.
--
-- The record is a JSON object (a string key, so SCAN for lock hashes never
-- finds it): window_start_ms, window_end_ms, host, pid, command, done_at_ms,
-- exit, version, op. Whoever can write the key can forge it: readers treat it
-- as data (lock/record.cpp).
--
-- A request may arrive twice (its reply was lost and the client sent it again):
-- a resend finds its own op id in the record and answers what the first send
-- did, unchanged.
--
-- KEYS[1] lock name   KEYS[2] the record: rlock_done:{NAME} (NAME's hash slot)
-- ARGV[1] owner token   ARGV[2] window length in ms (a whole number >= 1)
-- ARGV[3] host  ARGV[4] pid  ARGV[5] command  ARGV[6] CMD's exit status
-- ARGV[7] rlock version   ARGV[8] this request's op id
-- ARGV[9] how long before its deadline (ARGV[10]) the request was sent, in ms:
--         their difference is the latest server time at which it was sent, so
--         CMD, which ended before, ended by then. The completion belongs to the
--         window of the earlier of that and now: a record that arrives after the
--         window CMD ended in is that window's, never the next one's (absent or
--         not a number, or no deadline: now)
-- @deadline ARGV[10]: changes nothing when run after this server time (ms; lib/deadline.lua)
--
-- Returns {1, window_start_ms, window_end_ms, done_at_ms}   recorded
--         {-1}           no such lock (it expired or was released): nothing written
--         {-2, holder}   held by another owner: nothing written
--         {-3, type}     NAME is not a lock hash: nothing written
--         {-4, mode}     a read-write lock: nothing written
--         error 'ERR rlock: owner token is empty or reserved'
--         error 'ERR rlock: window length is not a whole number of ms >= 1'
-- @include deadline.lua
local past_deadline = too_late(ARGV[10])
if past_deadline then
  return past_deadline
end

local name, done = KEYS[1], KEYS[2]
local owner, length, op = ARGV[1], tonumber(ARGV[2]), ARGV[8]
local process_at = nil -- record.lua's holder_record is not used here
-- @include reserved.lua
-- @include holders.lua
-- @include record.lua
-- @include clock.lua
-- @include history.lua

local early = refused(owner)
if early then
  return early
end

-- A resend: the record its first send wrote.
if redis.call('TYPE', done)['ok'] == 'string' and redis.call('STRLEN', done) <= 8192 then
  local previous = decode_record(redis.call('GET', done))
  if previous and previous.op == op and type(previous.window_start_ms) == 'number' and
      type(previous.window_end_ms) == 'number' and type(previous.done_at_ms) == 'number' then
    return {1, previous.window_start_ms, previous.window_end_ms, previous.done_at_ms}
  end
end

local count, not_owned = owned_count(name, owner)
if not count then
  return not_owned
end
if not length or length < 1 or length ~= math.floor(length) then
  return redis.error_reply('ERR rlock: window length is not a whole number of ms >= 1')
end

local now = server_ms()
local before = string.match(ARGV[9] or '', '^%d+$') and string.match(ARGV[10] or '', '^%d+$') and
                   tonumber(ARGV[10]) - tonumber(ARGV[9])
if before and before < now then
  now = before -- CMD ended by then
end
local start = now - now % length
local finish = start + length
local record = cjson.encode({
  window_start_ms = start, window_end_ms = finish, host = ARGV[3], pid = tonumber(ARGV[4]),
  command = ARGV[5], done_at_ms = now, exit = tonumber(ARGV[6]), version = ARGV[7], op = op,
})
redis.call('SET', done, record)
redis.call('PEXPIREAT', done, finish + 30 * 86400000)
log_event('once-done', owner, {'exit', tonumber(ARGV[6]) or -1, 'window_start_ms', start, 'window_end_ms', finish})
return {1, start, finish, now}
