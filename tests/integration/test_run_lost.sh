#!/usr/bin/env bash
# run: losing the lock (force-unlock during the run) stops the child's whole
# process tree within TTL/3 plus a little and exits 76; --on-lost kill / term
# (with --kill-after escalation) / ignore.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# --- --ttl 1.5s: the tree (sh, a background sleep, a setsid'd grandchild) is gone
T=$TEST_TMP/l1
bg "$T" run L1 --ttl 1.5s -- sh -c '
  setsid sh -c "echo \$\$ >$1.gc.pid; exec sleep 600" &
  sleep 600 & echo $! >$1.sleep.pid
  echo $$ >$1.sh.pid
  wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid"); gc_pid=$(pid_of "$T.gc.pid")
check "the child tree is up (sh $sh_pid, sleep $sleep_pid, setsid grandchild $gc_pid)" \
  eval 'alive "$sh_pid" && alive "$sleep_pid" && alive "$gc_pid"'
check "the setsid grandchild left the child's session" test "$(ps -o sid= -p "$gc_pid" | tr -d ' ')" != "$(ps -o sid= -p "$sh_pid" | tr -d ' ')"
sleep 0.7
t0=$(ms)
r force-unlock L1
expect_rc 0 "force-unlock L1 during the run"
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  rlock exited ${d}ms after the force-unlock (TTL/3 = 500ms)"
check "rlock exits 76 after losing the lock (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "rlock exited by the next renewal (${d}ms <= TTL/3 + SLACK_MS)" test "$d" -le $(( 500 + SLACK_MS ))
check "the child sh is gone" wait_until 1 dead "$sh_pid"
check "the background sleep 600 is gone" wait_until 1 dead "$sleep_pid"
check "the setsid grandchild (sleep 600) is gone" wait_until 1 dead "$gc_pid"
check "stderr names the loss in an 'rlock: ' line" grep -q '^rlock: .*lost' "$T.err"
check "nothing from rlock on stdout" test ! -s "$T.out"
check "the lock is not re-created (EXISTS L1 = 0)" key_gone L1

# --- --ttl 3s: the default policy stops the child within ~TTL/3 + a little
T=$TEST_TMP/l2
bg "$T" run L2 --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 100' sh "$T"
child=$(pid_of "$T.sh.pid")
sleep 0.5
t0=$(ms)
r force-unlock L2
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  rlock exited ${d}ms after the force-unlock (TTL/3 = 1000ms)"
check "exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "stopped by the next renewal after the force-unlock (${d}ms <= TTL/3 + SLACK_MS)" test "$d" -le $(( 1000 + SLACK_MS ))
check "the child is gone" wait_until 1 dead "$child"
check "L2 is not re-created" key_gone L2

# --- another owner takes the lock right after the force-unlock: rlock stops the
# child, exits 76, and neither renews nor releases the new holder's lock
T=$TEST_TMP/l2b
bg "$T" run L2b --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 100' sh "$T"
child=$(pid_of "$T.sh.pid")
sleep 0.3
t0=$(ms)
r force-unlock L2b
r acquire L2b --owner thief --ttl 20s
expect_rc 0 "another owner takes L2b after the force-unlock"
thief_end=$(lease_end_ms L2b)
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 ))
check "taken over: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "taken over: stopped by the next renewal (${d}ms <= TTL/3 + SLACK_MS)" test "$d" -le $(( 1000 + SLACK_MS ))
check "taken over: the child is gone" wait_until 1 dead "$child"
check "taken over: the new holder still holds L2b" test "$(rcli HGET L2b thief)" = 1
moved=$(( $(lease_end_ms L2b) - thief_end ))
check "taken over: the new holder's lease was not renewed or shortened (its end moved ${moved}ms)" between "$moved" -5 5
r release L2b --owner thief

# --- a foreign string lock (SET NX PX) appears after the force-unlock: lost, and
# it is never deleted by rlock
T=$TEST_TMP/l2c
bg "$T" run L2c --ttl 1.5s -- sleep 100
check "L2c is held" wait_until 3 key_there L2c
sleep 0.2
r force-unlock L2c
rcli SET L2c foreign-token NX PX 20000 >/dev/null
check "rlock exits" wait_until 5 bg_done "$T"
check "foreign string lock: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "foreign string lock: left in place" test "$(rcli GET L2c)" = foreign-token
rcli DEL L2c >/dev/null

# --- a child that exits 0 on SIGTERM: the run still reports the loss (76)
T=$TEST_TMP/l2d
bg "$T" run L2d --ttl 1.5s -- sh -c 'trap "exit 0" TERM; echo $$ >$1.sh.pid; sleep 100 & wait' sh "$T"
pid_of "$T.sh.pid" >/dev/null
sleep 0.2
r force-unlock L2d
check "rlock exits" wait_until 5 bg_done "$T"
check "child exiting 0 after the loss's SIGTERM: still 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76

# --- --on-lost kill: a child that ignores SIGTERM still dies at once
T=$TEST_TMP/l3
bg "$T" run L3 --ttl 1.5s --on-lost kill --kill-after 30s -- sh -c '
  trap "" TERM
  echo $$ >$1.sh.pid
  sleep 600 & echo $! >$1.sleep.pid
  wait; wait; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
sleep 0.3
t0=$(ms)
r force-unlock L3
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  --on-lost kill: rlock exited ${d}ms after the force-unlock"
check "--on-lost kill: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "--on-lost kill: no wait for --kill-after 30s (${d}ms <= TTL/3 + SLACK_MS)" test "$d" -le $(( 500 + SLACK_MS ))
check "--on-lost kill: the TERM-ignoring sh is dead" wait_until 1 dead "$sh_pid"
check "--on-lost kill: its sleep is dead" wait_until 1 dead "$sleep_pid"
check "--on-lost kill: stderr says SIGKILL" grep -q 'SIGKILL' "$T.err"

# --- --on-lost term (default) escalates to SIGKILL after --kill-after
T=$TEST_TMP/l4
bg "$T" run L4 --ttl 1.5s --kill-after 1s -- sh -c '
  trap "" TERM
  echo $$ >$1.sh.pid
  sleep 600 & echo $! >$1.sleep.pid
  wait; wait; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
sleep 0.3
t0=$(ms)
r force-unlock L4
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  --kill-after 1s: rlock exited ${d}ms after the force-unlock"
check "--kill-after 1s: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "--kill-after 1s: SIGKILL came after the grace (${d}ms >= 1000ms)" test "$d" -ge 1000
check "--kill-after 1s: and not much later (${d}ms <= TTL/3 + 1s + SLACK_MS)" test "$d" -le $(( 1500 + SLACK_MS ))
check "--kill-after 1s: the TERM-ignoring sh is dead" wait_until 1 dead "$sh_pid"
check "--kill-after 1s: its sleep is dead" wait_until 1 dead "$sleep_pid"

# --- --on-lost ignore: warn, let the child finish, exit with its status
T=$TEST_TMP/l5
bg "$T" run L5 --ttl 1.5s --on-lost ignore -- sh -c 'sleep 2.5; echo finished; exit 3'
sleep 0.3
t0=$(ms)
r force-unlock L5
check "--on-lost ignore: a warning appears on stderr" wait_until 2 grep -q '^rlock: warning: ' "$T.err"
check "--on-lost ignore: the warning names the loss" grep -q '^rlock: warning: .*lost' "$T.err"
r acquire L5 --owner other --ttl 30s
expect_rc 0 "another owner takes L5 while the unprotected child runs"
other_end=$(lease_end_ms L5)
check "--on-lost ignore: rlock is still running" test ! -e "$T.rc"
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 ))
check "--on-lost ignore: exit is the child's status 3 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 3
check "--on-lost ignore: the child ran to its end" test "$(cat "$T.out")" = finished
check "--on-lost ignore: the child was not cut short (${d}ms >= 1800ms)" test "$d" -ge 1800
check "--on-lost ignore: no error line (only warnings)" test -z "$(grep '^rlock: ' "$T.err" | grep -v '^rlock: warning: ')"
check "the other owner's lock is untouched after rlock exits" test "$(rcli HGET L5 other)" = 1
moved=$(( $(lease_end_ms L5) - other_end ))
check "and its lease was not renewed by rlock (its end moved ${moved}ms)" between "$moved" -5 5

finish
