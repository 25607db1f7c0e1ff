-- The least a plain acquire can do, with rlock's arguments (bench/server_load
-- --floor; docs/performance.md, "What stands in the way"): take a free NAME
-- (Redisson's hash, count 1, the lease as PEXPIRE) or say it is busy. No
-- re-entry, record, fencing token, history, turns, latch or fair queue: a
-- measuring stick, never a lock to use.
-- @deadline ARGV[12]
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, 1, 1, tonumber(ARGV[2])}
end
return {0, '', redis.call('PTTL', KEYS[1]), 'hash', false}
