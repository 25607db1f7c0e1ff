# Redisson 4.x RFairLock driven from redis-cli (sourced by the fair-lock tests after
# lib.sh and start_redis): RACQ, RUNLOCK, RFAILED and the redisson_* helpers.
# ---- Redisson's RFairLock, as the Java client sends it (test fixtures: the script
# texts of RedissonFairLock.tryLockInnerAsync (EVAL_LONG), unlockInnerAsync and
# acquireFailedAsync; ARGV[currentTime] is the Java client's clock: here this
# machine's, the same as the server's).
cat >"$TEST_TMP/redisson_acquire.lua" <<'LUA'
while true do
  local firstThreadId2 = redis.call('lindex', KEYS[2], 0);
  if firstThreadId2 == false then break; end;
  local timeout = redis.call('zscore', KEYS[3], firstThreadId2);
  if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], firstThreadId2);
    redis.call('lpop', KEYS[2]);
  else break; end;
end;
if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0)
    or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then
  redis.call('lpop', KEYS[2]);
  redis.call('zrem', KEYS[3], ARGV[2]);
  local keys = redis.call('zrange', KEYS[3], 0, -1);
  for i = 1, #keys, 1 do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);
  end;
  redis.call('hset', KEYS[1], ARGV[2], 1);
  redis.call('pexpire', KEYS[1], ARGV[1]);
  return nil;
end;
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2],1);
  redis.call('pexpire', KEYS[1], ARGV[1]);
  return nil;
end;
local timeout = redis.call('zscore', KEYS[3], ARGV[2]);
if timeout ~= false then
  local ttl = redis.call('pttl', KEYS[1]);
  return math.max(0, ttl);
end;
local lastThreadId = redis.call('lindex', KEYS[2], -1);
local ttl;
if lastThreadId ~= false and lastThreadId ~= ARGV[2] and redis.call('zscore', KEYS[3], lastThreadId) ~= false then
  ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);
else
  ttl = redis.call('pttl', KEYS[1]);
end;
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2]);
end;
return ttl;
LUA
cat >"$TEST_TMP/redisson_unlock.lua" <<'LUA'
local val = redis.call('get', KEYS[5]);
if val ~= false then return tonumber(val); end;
while true do
  local firstThreadId2 = redis.call('lindex', KEYS[2], 0);
  if firstThreadId2 == false then break; end;
  local timeout = redis.call('zscore', KEYS[3], firstThreadId2);
  if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], firstThreadId2);
    redis.call('lpop', KEYS[2]);
  else break; end;
end;
if (redis.call('exists', KEYS[1]) == 0) then
  local nextThreadId = redis.call('lindex', KEYS[2], 0);
  if nextThreadId ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]);
  end;
  redis.call('set', KEYS[5], 1, 'px', ARGV[6]);
  return 1;
end;
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end;
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2]);
  redis.call('set', KEYS[5], 0, 'px', ARGV[6]);
  return 0;
end;
redis.call('del', KEYS[1]);
redis.call('set', KEYS[5], 1, 'px', ARGV[6]);
local nextThreadId = redis.call('lindex', KEYS[2], 0);
if nextThreadId ~= false then
  redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]);
end;
return 1;
LUA
cat >"$TEST_TMP/redisson_failed.lua" <<'LUA'
local queue = redis.call('lrange', KEYS[1], 0, -1);
local i = 1;
while i <= #queue and queue[i] ~= ARGV[1] do i = i + 1; end;
i = i + 1;
while i <= #queue do
  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i]);
  i = i + 1;
end;
redis.call('zrem', KEYS[2], ARGV[1]);
redis.call('lrem', KEYS[1], 0, ARGV[1]);
LUA
RACQ=$(rcli -x SCRIPT LOAD <"$TEST_TMP/redisson_acquire.lua")
RUNLOCK=$(rcli -x SCRIPT LOAD <"$TEST_TMP/redisson_unlock.lua")
RFAILED=$(rcli -x SCRIPT LOAD <"$TEST_TMP/redisson_failed.lua")
# redisson_try NAME THREAD WAIT_MS: one tryLock attempt of a Redisson thread (lease 30s);
# prints '' when acquired, else the ttl Redisson waits for
redisson_try() {
  rcli EVALSHA "$RACQ" 3 "$1" "redisson_lock_queue:{$1}" "redisson_lock_timeout:{$1}" 30000 "$2" "$3" "$(ms)"
}
# redisson_unlock_args NAME THREAD: the arguments of Redisson's unlock
redisson_unlock_args() {
  echo "$RUNLOCK 5 $1 redisson_lock_queue:{$1} redisson_lock_timeout:{$1} redisson_lock__channel:{$1}" \
    "redisson_unlock_latch:{$1}:$(date +%s%N) 0 30000 $2 $(ms) PUBLISH 30000"
}
redisson_unlock() { rcli EVALSHA $(redisson_unlock_args "$1" "$2"); }
redisson_give_up() { # NAME THREAD WAIT_MS: acquireFailed
  rcli EVALSHA "$RFAILED" 2 "redisson_lock_queue:{$1}" "redisson_lock_timeout:{$1}" "$2" "$3" >/dev/null
}
# redisson_trylock NAME THREAD WAIT_MS FILE (run it in the background): Redisson's
# tryLock(WAIT_MS) as RedissonLock.tryLock runs it: one attempt; subscribe to its
# own channel (redisson_lock__channel:{NAME}:THREAD); then, until the deadline:
# an attempt, and a wait for a message or the ttl it answered (once queued: the
# lock's PTTL), whichever comes first. At the deadline, acquireFailed. Writes
# "acquired MS" or "failed MS" (wall ms) to FILE. Bounded by WAIT_MS (plus one attempt).
redisson_trylock() {
  local name=$1 thread=$2 wait=$3 file=$4 ttl now left nap seen=0 got until
  local deadline=$(( $(ms) + wait )) sub="$file.sub"
  ttl=$(redisson_try "$name" "$thread" "$wait")
  if [ -z "$ttl" ]; then
    echo "acquired $(ms)" >"$file"; return
  fi
  rcli SUBSCRIBE "redisson_lock__channel:{$name}:$thread" >"$sub" 2>&1 &
  local sub_pid=$!
  while :; do
    ttl=$(redisson_try "$name" "$thread" "$wait")
    if [ -z "$ttl" ]; then
      echo "acquired $(ms)" >"$file.tmp"; break
    fi
    now=$(ms); left=$(( deadline - now ))
    if [ "$left" -le 0 ]; then
      redisson_give_up "$name" "$thread" "$wait"
      echo "failed $now" >"$file.tmp"; break
    fi
    nap=$left; [ "$ttl" -ge 0 ] && [ "$ttl" -lt "$nap" ] && nap=$ttl
    until=$(( now + nap ))
    while [ "$(ms)" -lt "$until" ]; do
      got=$(grep -c '^message$' "$sub")
      [ "$got" -gt "$seen" ] && { seen=$got; break; }
      sleep 0.02
    done
    now=$(ms)
    if [ "$now" -ge "$deadline" ]; then # tryLock: no attempt once the time is up
      redisson_give_up "$name" "$thread" "$wait"
      echo "failed $now" >"$file.tmp"; break
    fi
  done
  kill "$sub_pid" 2>/dev/null
  mv "$file.tmp" "$file"
}
