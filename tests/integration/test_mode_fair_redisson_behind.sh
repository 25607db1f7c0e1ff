#!/usr/bin/env bash
# rlock's fair waiter among Redisson fair waiters, in Redisson's order (issue 19,
# defect 8; issue 30, item 9). Redisson gives a waiter the give-up time of the
# one ahead (or the lock's end) plus its wait, and each acquisition takes the
# taker's wait off every waiter; its unlock drops a head whose give-up time has
# passed. rlock's waiter used to carry now + 8s: a Redisson acquisition ahead
# with a longer wait made it stale, and a quick unlock dropped it and served the
# Redisson waiter behind it first. Now its queue entry carries what Redisson
# gives its place (the one ahead's + 8s), refreshed every second, and its own
# give-up time (now + 8s) is in its record.
#  - three parties both ways round, with a Redisson holder: W1, rlock, W2 (W1's
#    wait 10s and 5s, W1 unlocking at once) is served W1, rlock, W2; rlock, W1,
#    W2 is served rlock, W1, W2;
#  - W1, rlock, W2 with an rlock holder and W1 holding a while (the old case);
#  - the script itself: the waiter's score is its place's, refreshed, and a
#    resend changes nothing.
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

# ---- three parties with a Redisson holder, both ways round; W1 unlocks at once
W0=5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:40
# three_party NAME W1_WAIT_MS ORDER: ORDER "behind" queues W1, rlock, W2; "ahead"
# queues rlock, W1, W2. The holder W0 unlocks; each Redisson waiter that gets
# the lock unlocks at once; rlock's holds ~0.2s. Checks who got it in which order.
three_party() {
  local n=$1 w1wait=$2 order=$3 log=$TEST_TMP/$1.order
  : >"$log"
  check "[$n] the Redisson holder takes $n" test -z "$(redisson_try "$n" "$W0" 5000)"
  if [ "$order" = ahead ]; then
    bg "$TEST_TMP/$n.rl" run --fair "$n" -w 20s -- sh -c 'echo rlock >>"$1"; sleep 0.2' sh "$log"
    check "[$n] rlock queues first" wait_until 5 queue_len_is "$n" 1
  fi
  redisson_trylock "$n" "$W1" "$w1wait" "$TEST_TMP/$n.w1" &
  _pids+=($!)
  check "[$n] W1 (Redisson tryLock(${w1wait}ms)) queues" wait_until 5 in_queue "$n" "$W1"
  if [ "$order" = behind ]; then
    bg "$TEST_TMP/$n.rl" run --fair "$n" -w 20s -- sh -c 'echo rlock >>"$1"; sleep 0.2' sh "$log"
    check "[$n] rlock queues behind W1" wait_until 5 queue_len_is "$n" 2
  fi
  redisson_trylock "$n" "$W2" 15000 "$TEST_TMP/$n.w2" &
  _pids+=($!)
  check "[$n] W2 (Redisson tryLock(15s)) queues last" wait_until 5 queue_len_is "$n" 3
  sleep 1.2 # rlock's waiter refreshes its place
  redisson_unlock "$n" "$W0" >/dev/null
  # Each Redisson waiter that gets it unlocks at once (within the 1s between
  # rlock's refreshes: the case that dropped rlock's waiter).
  local w done1=0 done2=0 i
  for i in $(seq 1 400); do
    for w in 1 2; do
      if [ "$(eval echo \$done$w)" = 0 ] && has_file "$TEST_TMP/$n.w$w"; then
        eval done$w=1
        echo "W$w $(cut -d' ' -f1 "$TEST_TMP/$n.w$w")" >>"$log"
        redisson_unlock "$n" "$(eval echo \$W$w)" >/dev/null
      fi
    done
    [ "$done1$done2" = 11 ] && bg_done "$TEST_TMP/$n.rl" && break
    sleep 0.05
  done
  local want="W1 acquired rlock W2 acquired"
  [ "$order" = ahead ] && want="rlock W1 acquired W2 acquired"
  check "[$n] served in queue order: $want (got: $(tr '\n' ' ' <"$log"))" test "$(tr '\n' ' ' <"$log")" = "$want "
  check "[$n] rlock exits 0" test "$(bg_rc "$TEST_TMP/$n.rl")" = 0
  check "[$n] nothing is left queued" test "$(rcli EXISTS "$n" "redisson_lock_queue:{$n}" "redisson_lock_timeout:{$n}")" = 0
}
in_queue() { grep -qF -- "$2" <<<"$(queue "$1")"; }
queue_len_is() { [ "$(rcli LLEN "redisson_lock_queue:{$1}")" = "$2" ]; }
W1=5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:41
three_party T10 10000 behind # W1's wait longer than rlock's 8s: rlock used to be dropped
three_party T5 5000 behind   # Redisson's default wait
three_party TA 10000 ahead

# ---- the script itself: the waiter's place in the queue, refreshed; a resend
# changes nothing; a Redisson acquisition ahead lowers it as it lowers everyone,
# and the waiter's next attempt sets it back to its place
FACQ=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/fair_acquire.lua")
fair_wait() { # NAME OWNER OP: one waiting attempt of process h/1 (given token)
  rcli EVALSHA "$FACQ" 6 "$1" "redisson_lock_token:{$1}" "rlock_acquire_latch:{$1}:$3" "redisson_lock_queue:{$1}" \
    "redisson_lock_timeout:{$1}" "rlock_waiters:{$1}" "$2" 30000 0 24000 h 1 c v 1 8000 | head -1
}
r acquire --fair FR --owner holder --ttl 60s
redisson_try FR "$W1" 10000 >/dev/null
s1=$(score FR "$W1")
check "an rlock waiter queues behind a Redisson waiter (busy)" test "$(fair_wait FR rw op-1)" = 0
check "its score is the one ahead's + 8s ($s1 + 8000 = $(score FR rw))" test "$(score FR rw)" = $(( s1 + 8000 ))
now=$(server_ms)
until=$(rcli HGET 'rlock_waiters:{FR}' rw | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["until_ms"])')
check "its own give-up time is now + 8s, in its record ($(( until - now ))ms)" between $(( until - now )) 7000 8000
redisson_try FR "$W2" 10000 >/dev/null
check "W2 queues behind it, counted from its score" test "$(score FR "$W2")" = $(( s1 + 8000 + 10000 ))
a=$(fair_wait FR rw op-2)
check "its attempt again (busy: $a): the same scores" \
  test "$a" = 0 -a "$(score FR rw)" = $(( s1 + 8000 )) -a "$(score FR "$W2")" = $(( s1 + 18000 ))
for e in "$W1" rw "$W2"; do rcli ZINCRBY 'redisson_lock_timeout:{FR}' -10000 "$e" >/dev/null; done
fair_wait FR rw op-3 >/dev/null
check "after every score lost 10s, its next attempt: its place again (the one ahead's + 8s)" \
  test "$(score FR rw)" = $(( s1 - 10000 + 8000 ))
check "... W2's stays Redisson's" test "$(score FR "$W2")" = $(( s1 + 8000 ))
rcli DEL FR 'redisson_lock_queue:{FR}' 'redisson_lock_timeout:{FR}' 'rlock_waiters:{FR}' >/dev/null

finish
