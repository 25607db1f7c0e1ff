#!/usr/bin/env bash
# run: a lost lease in a silent partition (redis-server frozen with SIGSTOP:
# connections are accepted by the kernel, nothing answers). CMD is stopped in
# time, and rlock itself exits soon after: at most one release attempt, bounded
# by what is left of the lease, none once the lease may have expired.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
PY=${PY:-$(python3 -c 'import sys;print(sys.executable)')}

TTL_MS=1500
KILL_AFTER_MS=1000
# Where the bound comes from: the last renewal confirmed before the freeze was
# sent before it, so the loss is declared (CMD's SIGTERM) at the latest TTL
# after the freeze; rlock must then exit within --kill-after + 1s (issue 19,
# item 9); plus 1s for a busy, shared machine.
BOUND_MS=$(( TTL_MS + KILL_AFTER_MS + 1000 + 1000 ))

# freeze_after_renewal NAME: waits for a renewal of NAME (its PTTL jumps up),
# then SIGSTOPs redis-server; sets T_STOP (ms).
freeze_after_renewal() {
  local prev p i renewed=no
  prev=$(rcli PTTL "$1")
  for i in $(seq 1 60); do
    p=$(rcli PTTL "$1")
    if [ "$p" -gt $(( prev + 200 )) ]; then renewed=yes; break; fi
    prev=$p; sleep 0.03
  done
  kill -STOP "$REDIS_PID"
  T_STOP=$(ms)
  check "a renewal of $1 was seen before the freeze" test "$renewed" = yes
}

# --- CMD obeys SIGTERM: rlock exits 76 within the bound
start_redis
T=$TEST_TMP/p1
bg "$T" run -v --ttl "${TTL_MS}ms" --kill-after "${KILL_AFTER_MS}ms" P1 -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
sh_pid=$(pid_of "$T.sh.pid")
check "CMD runs (pid $sh_pid)" alive "$sh_pid"
freeze_after_renewal P1
while alive "$sh_pid" && [ $(( $(ms) - T_STOP )) -lt 10000 ]; do sleep 0.02; done
t_dead=$(ms)
check "rlock ends" wait_until 10 bg_done "$T"
d=$(( $(bg_t "$T") - T_STOP ))
echo "  CMD stopped $(( t_dead - T_STOP ))ms into the partition; rlock exited ${d}ms into it (bound ${BOUND_MS}ms = TTL ${TTL_MS} + kill-after ${KILL_AFTER_MS} + 1000 + 1000 busy-machine margin)"
check "rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "rlock exits within ${BOUND_MS}ms of the freeze (${d}ms)" test "$d" -le "$BOUND_MS"
check "no release is sent twice (no resend after the loss)" eval '! grep -q "sending again" "$T.err"'
kill -CONT "$REDIS_PID"
stop_redis

# --- CMD ignores SIGTERM: SIGKILLed when the lease could end; by then a release
# is pointless, and rlock exits without waiting on the frozen server
start_redis
T=$TEST_TMP/p2
bg "$T" run -v --ttl "${TTL_MS}ms" --kill-after "${KILL_AFTER_MS}ms" P2 -- sh -c 'trap "" TERM; echo $$ >$1.sh.pid; while :; do sleep 0.05; done' sh "$T"
sh_pid=$(pid_of "$T.sh.pid")
check "CMD runs (pid $sh_pid)" alive "$sh_pid"
freeze_after_renewal P2
while alive "$sh_pid" && [ $(( $(ms) - T_STOP )) -lt 10000 ]; do sleep 0.02; done
t_dead=$(ms)
check "rlock ends" wait_until 10 bg_done "$T"
d=$(( $(bg_t "$T") - T_STOP ))
echo "  TERM-ignoring CMD killed $(( t_dead - T_STOP ))ms into the partition; rlock exited ${d}ms into it (bound ${BOUND_MS}ms)"
check "rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "rlock exits within ${BOUND_MS}ms of the freeze (${d}ms)" test "$d" -le "$BOUND_MS"
check "no release is sent twice" eval '! grep -q "sending again" "$T.err"'
kill -CONT "$REDIS_PID"
stop_redis

finish
