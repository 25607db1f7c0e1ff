#!/usr/bin/env bash
# run when Redis dies (kill -9) mid-run with --ttl 3s: renewals cannot be
# confirmed, so the child is stopped before the lease could have expired on the
# server, rlock exits 76 and does not hang.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# Redis unresponsive for a moment (SIGSTOP 0.6s, shorter than the margin): the
# renewal is late but confirmed; the child is not stopped.
T=$TEST_TMP/pause
bg "$T" run P --ttl 3s -- sleep 4
check "P is held" wait_until 3 key_there P
sleep 1.1
kill -STOP "$REDIS_PID"; sleep 0.6; kill -CONT "$REDIS_PID"
check "rlock exits" wait_until 8 bg_done "$T"
check "a 0.6s stall of Redis does not stop the child (exit 0, got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "P is released" key_gone P

# renewed_then FILE NAME FAULT...: `run NAME --ttl 3s` over a shell and its
# `sleep 600` (FILE.sh.pid, FILE.sleep.pid; deaths watched into FILE.sh.death
# and FILE.sleep.death), with PTTL NAME sampled on one connection; once a
# renewal is seen (the PTTL jumps up) runs FAULT. Sets T_FAULT (wall ms) and
# FLOOR: the latest time the server's lease is proven to last (lease_floor).
renewed_then() {
  local f=$1 name=$2 child=$3; shift 3
  bg "$f" run "$name" --ttl 3s -- sh -c "$child" sh "$f"
  sh_pid=$(pid_of "$f.sh.pid"); sleep_pid=$(pid_of "$f.sleep.pid")
  deathwatch "$sh_pid" "$f.sh.death"; deathwatch "$sleep_pid" "$f.sleep.death"
  sampler_start "$f.pttl" "$f.stop" PTTL "$name"
  # A renewal: a sample whose PTTL is 300ms above the one before.
  renewed() { awk 'NR > 1 && $3 > prev + 300 { found = 1 } { prev = $3 } END { exit !found }' "$f.pttl" 2>/dev/null; }
  check "$name: a renewal was seen before the fault" wait_until 5 renewed
  "$@"
  T_FAULT=$(ms)
  touch "$f.stop"
  FLOOR=$(lease_floor "$f.pttl" "$T_FAULT")
  echo "  $name: the fault came at the lease floor - $(( FLOOR - T_FAULT ))ms"
}
# died_before_floor LABEL FILE: the child's tree died before FLOOR.
died_before_floor() {
  local label=$1 f=$2
  check "$label: the tree is stopped" wait_until 10 dead_all "$sh_pid" "$sleep_pid"
  wait_until 5 has_file "$f.sleep.death"; wait_until 5 has_file "$f.sh.death"
  local d1 d2; d1=$(cat "$f.sleep.death" 2>/dev/null || echo -1); d2=$(cat "$f.sh.death" 2>/dev/null || echo -1)
  local dead=$(( d1 > d2 ? d1 : d2 ))
  echo "  $label: the tree died $(( dead - T_FAULT ))ms after the fault, $(( FLOOR - dead ))ms before the lease could end"
  check "$label: the child died before the server's lease could have expired" test "$d1" -gt 0 -a "$d2" -gt 0 -a "$dead" -lt "$FLOOR"
}

T=$TEST_TMP/d
renewed_then "$T" D 'echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait' stop_redis
died_before_floor "Redis killed" "$T"
check "rlock does not hang: exits within 6s of the kill" wait_until 6 bg_done "$T"
[ -s "$T.t" ] && echo "  rlock exited $(( $(cat "$T.t") - T_FAULT ))ms after the kill"
check "rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "stderr has an 'rlock: ' line about the lock being lost" grep -q '^rlock: .*lost' "$T.err"
check "nothing from rlock on stdout" test ! -s "$T.out"

# The same with a child that ignores SIGTERM (default --kill-after 10s): the
# SIGKILL must still come before the lease could end.
start_redis
T=$TEST_TMP/d3
renewed_then "$T" D3 'trap "" TERM; echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait; wait; wait' stop_redis
died_before_floor "TERM-ignoring child" "$T"
check "TERM-ignoring child: rlock exits within 6s of the kill" wait_until 6 bg_done "$T"
check "TERM-ignoring child: rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76

# Redis unresponsive (SIGSTOP, nothing answers): same deadline, and rlock
# still exits (its release attempt is bounded by --io-timeout).
start_redis
T=$TEST_TMP/d4
renewed_then "$T" D4 'echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait' kill -STOP "$REDIS_PID"
died_before_floor "stalled Redis" "$T"
check "stalled Redis: rlock exits within 8s of the stall" wait_until 8 bg_done "$T"
[ -s "$T.t" ] && echo "  stalled Redis: rlock exited $(( $(cat "$T.t") - T_FAULT ))ms after the stall"
check "stalled Redis: rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
kill -CONT "$REDIS_PID"
stop_redis

# Redis gone before the child starts (connection refused) -> 69, CMD never runs
"$RLOCK" run D2 -- touch "$T.ran" >/dev/null 2>"$T.err2"; RC=$?
expect_rc 69 "run against a dead Redis"
check "the command did not run" test ! -e "$T.ran"

finish
