#!/usr/bin/env bash
# run and signals: a waiting `run -w` ends at once on SIGTERM (143) / SIGINT (130)
# leaving nothing in Redis; signals to a running rlock reach the child, whose
# status becomes rlock's, and the lock is released right after.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# --- waiting run interrupted
r acquire W --ttl 60s --owner holder
expect_rc 0 "holder takes W"
before=$(rcli HGETALL W | sort | tr '\n' ' ')
for sig in TERM INT; do
  want=$([ $sig = TERM ] && echo 143 || echo 130)
  T=$TEST_TMP/w$sig
  bg "$T" run W -w 30s -- touch "$T.ran"
  check "SIG$sig: the waiting run subscribes to W's channel" wait_until 5 has_sub W
  sleep 0.2
  t0=$(ms)
  kill -$sig "$BG_PID"
  check "SIG$sig: the waiter exits" wait_until 3 bg_done "$T"
  d=$(( $(cat "$T.t") - t0 )); echo "  SIG$sig: waiter ended ${d}ms after the signal"
  check "SIG$sig: exit $want (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = "$want"
  check "SIG$sig: ended promptly (${d}ms < 500ms)" test "$d" -lt 500
  check "SIG$sig: the command never ran" test ! -e "$T.ran"
  check "SIG$sig: nothing on stdout" test ! -s "$T.out"
  check "SIG$sig: no subscription left on W's channel" wait_until 2 no_sub W
  check "SIG$sig: W is unchanged (holder only)" test "$(rcli HGETALL W | sort | tr '\n' ' ')" = "$before"
  check "SIG$sig: no other key was left behind" test "$(rcli --scan | grep -vcE "_latch:|^rlock_log:")" = 2
done
r release W --owner holder

# --- SIGTERM forwarded to a child that traps it: rlock exits with the child's status
T=$TEST_TMP/f1
bg "$T" run F -- sh -c 'trap "exit 5" TERM; sleep 100 & echo $! >$1.sleep.pid; wait' sh "$T"
sleep_pid=$(pid_of "$T.sleep.pid")
check "F is held while the child runs" key_there F
t0=$(ms)
kill -TERM "$BG_PID"
check "rlock exits" wait_until 5 bg_done "$T"
gone=$( key_gone F && echo yes || echo no )
d=$(( $(cat "$T.t") - t0 )); echo "  SIGTERM forwarded: rlock exited ${d}ms after the signal"
check "SIGTERM forwarded: exit 5, the child's own status (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 5
check "SIGTERM forwarded: promptly (${d}ms < 1000ms)" test "$d" -lt 1000
check "SIGTERM forwarded: F is free right after rlock exits" test "$gone" = yes
check "SIGTERM forwarded: the child's sleep 100 is gone" wait_until 1 dead "$sleep_pid"

# --- a forwarded signal reaches a setsid'd grandchild too, and nothing of the
# tree is left once the child has exited: the grandchild ignores SIGTERM, so it
# is named in a warning and SIGKILLed after --kill-after, before the release
T=$TEST_TMP/f3
bg "$T" run --kill-after 0.5s F -- sh -c 'trap "exit 5" TERM; setsid sh -c "trap \"\" TERM; echo \$\$ >$1.gc.pid; exec sleep 600" & sleep 100 & echo $! >$1.sleep.pid; wait' sh "$T"
gc_pid=$(pid_of "$T.gc.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
sleep 0.1
kill -TERM "$BG_PID"
check "rlock exits" wait_until 5 bg_done "$T"
check "with a setsid grandchild: exit 5 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 5
if [ -n "$RLOCK_NO_SUBREAPER" ]; then
  # Orphaned when CMD exits, it goes to init, out of rlock's sight.
  echo "not checked without a subreaper: the setsid grandchild left behind is stopped and named"
  kill -9 "$gc_pid" 2>/dev/null
else
  check "the TERM-ignoring setsid grandchild is gone after the run" wait_until 1 dead "$gc_pid"
  check "the warning names the leftover sleep and its pid" grep -q "^rlock: warning: .*left sleep (pid $gc_pid)" "$T.err"
fi
check "the sleep is gone" wait_until 1 dead "$sleep_pid"
check "F is free" key_gone F

# --- SIGTERM to a plain sleep child: 128+15
T=$TEST_TMP/f2
bg "$T" run F -- sleep 100
check "F is held" wait_until 3 key_there F
sleep 0.2
kill -TERM "$BG_PID"
check "rlock exits" wait_until 5 bg_done "$T"
gone=$( key_gone F && echo yes || echo no )
check "SIGTERM forwarded to sleep: exit 143 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 143
check "F is free right after" test "$gone" = yes

# --- other forwarded signals: HUP, USR1, USR2, QUIT, INT reach the child
for sig in HUP USR1 USR2 QUIT INT; do
  T=$TEST_TMP/s$sig
  bg "$T" run F -- sh -c 'trap "echo got; exit 9" '"$sig"'; echo $$ >$1.sh.pid; sleep 100 & wait' sh "$T"
  pid_of "$T.sh.pid" >/dev/null
  kill -$sig "$BG_PID"
  check "SIG$sig: rlock exits" wait_until 5 bg_done "$T"
  check "SIG$sig is forwarded to the child (exit 9, got $(bg_rc "$T"); out '$(cat "$T.out")')" \
    test "$(bg_rc "$T")" = 9 -a "$(cat "$T.out")" = got
done
check "F is free at the end" key_gone F

finish
