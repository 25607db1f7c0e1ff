-- The least a release can do, with rlock's arguments (bench/server_load
-- --floor): the owner's hold deleted, '0' published on the release channel,
-- the request's latch set (a resend's answer). No count, history or turns: a
-- measuring stick, never a lock to use.
-- @deadline ARGV[6]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return {-1}
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
redis.call('SET', KEYS[3], 0, 'PX', ARGV[4])
return {0}
