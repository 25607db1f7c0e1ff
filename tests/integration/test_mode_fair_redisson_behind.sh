#!/usr/bin/env bash
# A Redisson fair waiter queued behind an rlock waiter is served in its turn
# (issue 19, defect 8). Queue: W1 (Redisson), rlock, W2 (Redisson, tryLock(10s)).
# Redisson's acquisition lowers every waiter's give-up time by the taker's wait
# (its tryLock wait): W1's take took its 10s off W2 too, although W2's give-up
# time was counted from rlock's own (now + 8s), not from W1's; rlock's take then
# took its 8s share off again, so W2, the head after rlock, looked stale: rlock's
# release dropped it and woke nobody, and W2 gave up after its 10s.
. "$(dirname "$0")/lib.sh"
start_redis
. "$(dirname "$0")/redisson_fair.sh"
check "Redisson's fair-lock scripts load" test ${#RACQ} = 40 -a ${#RUNLOCK} = 40 -a ${#RFAILED} = 40

queue() { rcli LRANGE "redisson_lock_queue:{$1}" 0 -1 | sed '/^$/d' | tr '\n' ' '; }
queue_is() { [ "$(queue "$1")" = "$2" ]; }
score() { rcli ZSCORE "redisson_lock_timeout:{$1}" "$2"; }
server_ms() { rcli TIME | { read -r s; read -r us; echo $(( s * 1000 + us / 1000 )); }; }
W1=5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:41
W2=5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:42

scenario() { # NAME W1_WAIT_MS
  local n=$1 w1wait=$2
  r acquire --fair "$n" --owner holder --ttl 60s
  expect_rc 0 "[$n] a holder takes $n"
  check "[$n] W1 (Redisson, wait ${w1wait}ms) queues" test -n "$(redisson_try "$n" "$W1" "$w1wait")"
  bg "$TEST_TMP/$n.rl" acquire --fair "$n" -w 10s --owner rl --ttl 30s
  check "[$n] rlock queues behind W1" wait_until 5 queue_is "$n" "$W1 rl "
  redisson_trylock "$n" "$W2" 10000 "$TEST_TMP/$n.w2" &
  _pids+=($!)
  check "[$n] W2 (Redisson tryLock(10s)) queues behind rlock" wait_until 5 queue_is "$n" "$W1 rl $W2 "
  local t_w2=$(ms)
  # rlock's waiter learns its followers' times at its next attempt (within its 1s
  # refresh): what a Redisson acquisition ahead takes off before then is not
  # known to it (README, Fair locks: the limit).
  check "[$n] rlock's waiter has seen W2 behind it" \
    wait_until 3 eval 'rcli HGET "rlock_waiters:{$n}" rl | grep -qF "\"$W2\":"'
  r release "$n" --owner holder
  check "[$n] W1 takes $n (Redisson's script: every score lowered by its wait)" \
    test -z "$(redisson_try "$n" "$W1" "$w1wait")"
  sleep 1.5 # W1 holds; rlock keeps its place
  check "[$n] W1 unlocks" test "$(redisson_unlock "$n" "$W1")" = 1
  check "[$n] rlock gets $n in turn" wait_until 5 bg_done "$TEST_TMP/$n.rl"
  check "[$n] rlock exits 0 and holds $n" bash -c '[ "$1" = 0 ] && [ "$2" = 1 ]' _ \
    "$(bg_rc "$TEST_TMP/$n.rl")" "$(rcli HGET "$n" rl)"
  local s2; s2=$(score "$n" "$W2"); local now; now=$(server_ms)
  echo "  [$n] W2's give-up time after rlock's take: $(( ${s2:-0} - now ))ms ahead (W2 queued $(( $(ms) - t_w2 ))ms ago)"
  check "[$n] W2 is still queued, alone" queue_is "$n" "$W2 "
  check "[$n] W2's give-up time is still ahead" test "${s2:-0}" -gt "$now"
  sleep 1
  r release "$n" --owner rl
  expect_rc 0 "[$n] rlock releases $n"
  check "[$n] W2 ends its tryLock" wait_until 12 has_file "$TEST_TMP/$n.w2"
  local res; res=$(cat "$TEST_TMP/$n.w2" 2>/dev/null)
  echo "  [$n] W2: ${res%% *} $(( ${res##* } - t_w2 ))ms after it queued"
  check "[$n] W2 got $n within its 10s ($res)" test "${res%% *}" = acquired
  check "[$n] W2 holds $n" test "$(rcli HGET "$n" "$W2")" = 1
  redisson_unlock "$n" "$W2" >/dev/null
  check "[$n] nothing is left queued" test "$(rcli EXISTS "$n" "redisson_lock_queue:{$n}" "redisson_lock_timeout:{$n}")" = 0
}

scenario FB 10000 # W1's wait as long as W2's
scenario FC 5000  # Redisson's default wait

# ---- the same by the script itself: the follower's time comes back once, however
# often the waiter's attempt is sent (a resend after a lost reply)
FACQ=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/fair_acquire.lua")
fair_wait() { # NAME OWNER OP: one waiting attempt of process h/1 (given token)
  rcli EVALSHA "$FACQ" 6 "$1" "redisson_lock_token:{$1}" "rlock_acquire_latch:{$1}:$3" "redisson_lock_queue:{$1}" \
    "redisson_lock_timeout:{$1}" "rlock_waiters:{$1}" "$2" 30000 0 24000 h 1 c v 1 8000 | head -1
}
r acquire --fair FR --owner holder --ttl 60s
check "an rlock waiter queues (busy)" test "$(fair_wait FR rw op-1)" = 0
redisson_try FR "$W2" 10000 >/dev/null
check "W2 queues behind it" queue_is FR "rw $W2 "
s2=$(score FR "$W2")
a=$(fair_wait FR rw op-2)
check "its attempt again (busy: $a): W2's time stays ($s2)" test "$a" = 0 -a "$(score FR "$W2")" = "$s2"
# a Redisson acquisition ahead takes its 10s wait off every score
for e in rw "$W2"; do rcli ZINCRBY 'redisson_lock_timeout:{FR}' -10000 "$e" >/dev/null; done
check "W2 lost 10s ($(score FR "$W2"))" test "$(score FR "$W2")" = $(( s2 - 10000 ))
fair_wait FR rw op-3 >/dev/null
check "the waiter's next attempt gives them back ($(score FR "$W2"))" test "$(score FR "$W2")" = "$s2"
fair_wait FR rw op-3 >/dev/null
check "sent again, nothing more ($(score FR "$W2"))" test "$(score FR "$W2")" = "$s2"
check "the record remembers W2's time" eval 'rcli HGET "rlock_waiters:{FR}" rw | grep -qF "\"$W2\":$s2"'

finish
