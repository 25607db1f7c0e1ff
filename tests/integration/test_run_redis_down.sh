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

T=$TEST_TMP/d
bg "$T" run D --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
check "D is held" key_there D

# Wait for a renewal (PTTL jumps up), then kill Redis right after it. The
# lease end as the server sees it is at least (time of the last PTTL request)
# + (that PTTL); the child must be dead before then.
prev=$(rcli PTTL D); renewed=no
for i in $(seq 1 60); do
  t_poll=$(ms); p=$(rcli PTTL D)
  if [ "$p" -gt $(( prev + 300 )) ]; then renewed=yes; break; fi
  prev=$p; sleep 0.05
done
lease_end=$(( t_poll + p ))
stop_redis
t_kill=$(ms)
check "a renewal was seen before killing Redis (PTTL $prev -> $p)" test "$renewed" = yes
echo "  Redis killed $(( t_kill - t_poll ))ms after the renewal was seen; lease ends at kill + $(( lease_end - t_kill ))ms"
while alive "$sleep_pid" && [ $(( $(ms) - t_kill )) -lt 10000 ]; do sleep 0.02; done
t_dead=$(ms)
check "the child's tree is stopped" dead_all "$sh_pid" "$sleep_pid"
echo "  child's sleep died $(( t_dead - t_kill ))ms after the kill, $(( lease_end - t_dead ))ms before the lease could end"
check "the child died before the lease could have expired ($(( t_dead - t_kill ))ms after the kill < $(( lease_end - t_kill ))ms)" \
  test "$t_dead" -lt "$lease_end"
check "the child died less than 3s after the kill ($(( t_dead - t_kill ))ms)" test $(( t_dead - t_kill )) -lt 3000
check "rlock does not hang: exits within 6s of the kill" wait_until 6 bg_done "$T"
[ -s "$T.t" ] && echo "  rlock exited $(( $(cat "$T.t") - t_kill ))ms after the kill"
check "rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "stderr has an 'rlock: ' line about the lock being lost" grep -q '^rlock: .*lost' "$T.err"
check "nothing from rlock on stdout" test ! -s "$T.out"

# The same with a child that ignores SIGTERM (default --kill-after 10s): the
# SIGKILL must still come before the lease could end.
start_redis
T=$TEST_TMP/d3
bg "$T" run D3 --ttl 3s -- sh -c 'trap "" TERM; echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait; wait; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
prev=$(rcli PTTL D3); renewed=no
for i in $(seq 1 60); do
  t_poll=$(ms); p=$(rcli PTTL D3)
  if [ "$p" -gt $(( prev + 300 )) ]; then renewed=yes; break; fi
  prev=$p; sleep 0.05
done
lease_end=$(( t_poll + p ))
stop_redis
t_kill=$(ms)
check "TERM-ignoring child: a renewal was seen before killing Redis" test "$renewed" = yes
while { alive "$sleep_pid" || alive "$sh_pid"; } && [ $(( $(ms) - t_kill )) -lt 10000 ]; do sleep 0.02; done
t_dead=$(ms)
echo "  TERM-ignoring child died $(( t_dead - t_kill ))ms after the kill, $(( lease_end - t_dead ))ms before the lease could end"
check "TERM-ignoring child: the tree is stopped" dead_all "$sh_pid" "$sleep_pid"
check "TERM-ignoring child: killed before the lease could have expired" test "$t_dead" -lt "$lease_end"
check "TERM-ignoring child: rlock exits within 6s of the kill" wait_until 6 bg_done "$T"
check "TERM-ignoring child: rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76

# Redis unresponsive (SIGSTOP, nothing answers): same deadline, and rlock
# still exits (its release attempt is bounded by --io-timeout).
start_redis
T=$TEST_TMP/d4
bg "$T" run D4 --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; sleep 600 & echo $! >$1.sleep.pid; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
prev=$(rcli PTTL D4); renewed=no
for i in $(seq 1 60); do
  t_poll=$(ms); p=$(rcli PTTL D4)
  if [ "$p" -gt $(( prev + 300 )) ]; then renewed=yes; break; fi
  prev=$p; sleep 0.05
done
lease_end=$(( t_poll + p ))
kill -STOP "$REDIS_PID"
t_kill=$(ms)
check "stalled Redis: a renewal was seen before the stall" test "$renewed" = yes
while alive "$sleep_pid" && [ $(( $(ms) - t_kill )) -lt 10000 ]; do sleep 0.02; done
t_dead=$(ms)
echo "  stalled Redis: child died $(( t_dead - t_kill ))ms after the stall, $(( lease_end - t_dead ))ms before the lease could end"
check "stalled Redis: the tree is stopped" dead_all "$sh_pid" "$sleep_pid"
check "stalled Redis: the child died before the lease could have expired" test "$t_dead" -lt "$lease_end"
check "stalled Redis: rlock exits within 8s of the stall" wait_until 8 bg_done "$T"
[ -s "$T.t" ] && echo "  stalled Redis: rlock exited $(( $(cat "$T.t") - t_kill ))ms after the stall"
check "stalled Redis: rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
kill -CONT "$REDIS_PID"
stop_redis

# Redis gone before the child starts (connection refused) -> 69, CMD never runs
"$RLOCK" run D2 -- touch "$T.ran" >/dev/null 2>"$T.err2"; RC=$?
expect_rc 69 "run against a dead Redis"
check "the command did not run" test ! -e "$T.ran"

finish
