#!/usr/bin/env bash
# run: a lost lease in a silent partition (redis-server frozen with SIGSTOP:
# connections are accepted by the kernel, nothing answers). CMD is stopped in
# time, and rlock itself exits soon after: at most one release attempt, bounded
# by what is left of the lease, none once the lease may have expired.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"

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

# Issue 43: the loss is said once, and after the renewal's warning that explains
# it, when there is one (the renewal in flight at the stop time times out later).
loss_after_its_warning() {
  awk '/^rlock: [0-9:.]+ / { next } # -v lines
       /^rlock: warning: (cannot renew|no replica confirmed)/ { if (!w) w = NR }
       /^rlock: .*lock lost/ { n++; if (!l) l = NR }
       END { exit !(n == 1 && (!w || w < l)) }' "$1"
}

# partition LABEL NAME MAX_RELEASES SCRIPT: runs `run -v NAME -- sh -c SCRIPT`
# (SCRIPT writes its pid to $1.sh.pid), freezes Redis after a renewal, and
# checks that rlock exits 76 within the bound, having sent at most MAX_RELEASES
# release requests (-v logs each request; a release names its latch key).
partition() {
  local label=$1 name=$2 max_releases=$3 script=$4 T=$TEST_TMP/$2 sh_pid t_dead d releases
  start_redis
  bg "$T" run -v --ttl "${TTL_MS}ms" --kill-after "${KILL_AFTER_MS}ms" "$name" -- sh -c "$script" sh "$T"
  sh_pid=$(pid_of "$T.sh.pid")
  check "$label: CMD runs (pid $sh_pid)" alive "$sh_pid"
  freeze_after_renewal "$name"
  while alive "$sh_pid" && [ $(( $(ms) - T_STOP )) -lt 10000 ]; do sleep 0.02; done
  t_dead=$(ms)
  check "$label: rlock ends" wait_until 10 bg_done "$T"
  d=$(( $(bg_t "$T") - T_STOP ))
  echo "  $label: CMD gone $(( t_dead - T_STOP ))ms into the partition; rlock exited ${d}ms into it (bound ${BOUND_MS}ms = TTL ${TTL_MS} + kill-after ${KILL_AFTER_MS} + 1000 + 1000 for a busy machine)"
  check "$label: rlock exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
  check "$label: rlock exits within ${BOUND_MS}ms of the freeze (${d}ms)" test "$d" -le "$BOUND_MS"
  check "$label: no request is sent again after the loss" eval '! grep -q "sending again" "$T.err"'
  check "$label: the loss said once, after the warning that explains it: $(grep -E 'rlock: (warning: cannot renew|.*lock lost)' "$T.err" | cut -c1-90 | tr '\n' '|')" \
    loss_after_its_warning "$T.err"
  releases=$(grep -c "^rlock: [0-9:.]* > EVALSHA .*redisson_unlock_latch:{$name}:" "$T.err")
  check "$label: release requests sent: $releases (at most $max_releases)" test "$releases" -le "$max_releases"
  kill -CONT "$REDIS_PID"
  stop_redis
}

# CMD obeys SIGTERM: one release try at most, within what is left of the lease.
partition "CMD stops on SIGTERM" P1 1 'echo $$ >$1.sh.pid; exec sleep 600'
# CMD ignores SIGTERM: SIGKILLed when the lease could end; by then a release is
# pointless, and rlock exits without waiting on the frozen server.
partition "CMD ignores SIGTERM" P2 0 'trap "" TERM; echo $$ >$1.sh.pid; while :; do sleep 0.05; done'

finish
