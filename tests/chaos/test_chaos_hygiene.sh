#!/usr/bin/env bash
# Chaos 10 - hygiene after a mixed workload: acquire / re-enter / renew /
# release, runs that succeed, fail, time out waiting and are interrupted, a
# force-unlock under a waiter, a SCRIPT FLUSH in the middle, and a lock lost
# under a run. Afterwards: no process left, no lock key, no pub/sub channel,
# and the script cache holds rlock's scripts and nothing else. (Every other
# chaos scenario ends with the same checks.)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

for i in $(seq 1 5); do
  r acquire "H$i" --ttl 10s; tok=$OUT
  r acquire "H$i" --owner "$tok"
  r renew "H$i" --owner "$tok" --ttl 20s
  r release "H$i" --owner "$tok" --all
  check "manual cycle $i ends free" key_gone "H$i"
done
r run HR -- true
check "run true: 0" test "$RC" = 0
r run HR -- sh -c 'exit 7'
check "run exit 7: 7" test "$RC" = 7
rcli SCRIPT FLUSH >/dev/null
r run HR -- true
check "run after SCRIPT FLUSH: 0" test "$RC" = 0
bg "$TEST_TMP/hold" run --ttl "$TTL" HW -- sleep 30
wait_until 5 key_there HW
r run -w 0.5s HW -- true
check "a waiter that times out: 75" test "$RC" = 75
bg "$TEST_TMP/int" run -w 30s HW -- true
sleep 0.5
kill -INT "$BG_PID"
wait_until 5 bg_done "$TEST_TMP/int"
check "a waiter interrupted: 130 (rc $(bg_rc "$TEST_TMP/int"))" test "$(bg_rc "$TEST_TMP/int")" = 130
bg "$TEST_TMP/wait" run -w 30s HW -- true
sleep 0.3
r force-unlock HW
wait_until 5 bg_done "$TEST_TMP/wait"
check "force-unlock wakes the waiter, which runs: 0 (rc $(bg_rc "$TEST_TMP/wait"))" test "$(bg_rc "$TEST_TMP/wait")" = 0
wait_until 5 bg_done "$TEST_TMP/hold"
check "the force-unlocked holder: 76 (rc $(bg_rc "$TEST_TMP/hold"))" test "$(bg_rc "$TEST_TMP/hold")" = 76
hygiene_checks hygiene
finish
