#!/usr/bin/env bash
# run killed with SIGKILL: the child and its grandchildren die with it, and the
# lock is freed (rlock's supervising process releases it; at worst it expires
# within TTL), so another run waiting on it gets it. With --on-lost ignore the
# child goes on and the lock is freed all the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

T=$TEST_TMP/k
bg "$T" run K --ttl 2s -- sh -c '
  echo $$ >$1.sh.pid
  sh -c "echo \$\$ >$1.gc.pid; sleep 600 & echo \$! >$1.gcsleep.pid; wait" &
  wait' sh "$T"
rlock_pid=$BG_PID
sh_pid=$(pid_of "$T.sh.pid"); gc_pid=$(pid_of "$T.gc.pid"); gcsleep_pid=$(pid_of "$T.gcsleep.pid")
check "the tree is up (rlock $rlock_pid, sh $sh_pid, grandchild sh $gc_pid, sleep $gcsleep_pid)" \
  eval 'alive "$rlock_pid" && alive "$sh_pid" && alive "$gc_pid" && alive "$gcsleep_pid"'
check "K is held" key_there K
sleep 0.8    # in between two renewals (TTL/3 = 667ms)
t_kill=$(ms)
kill -9 "$rlock_pid"
W=$TEST_TMP/waiter
# The waiter's command looks, while it holds K, for any process of the killed
# tree still running (a zombie has stopped running): there must be none.
bg "$W" run K -w 5s -- sh -c '
  for p in "$@"; do
    st=$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f1)
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && echo "ALIVE $p $st"
  done
  echo got-it' sh "$sh_pid" "$gc_pid" "$gcsleep_pid"
check "rlock is dead" wait_until 2 bg_done "$T"
check "the child sh dies with rlock" wait_until 2 dead "$sh_pid"
check "the grandchild sh dies" wait_until 2 dead "$gc_pid"
check "the grandchild's sleep 600 dies" wait_until 2 dead "$gcsleep_pid"
d=$(( $(ms) - t_kill )); echo "  the tree was gone ${d}ms after SIGKILL"
check "no process of that run is left (the supervisor included)" \
  wait_until 2 eval '! pgrep -f -- "$T" >/dev/null'
check "K becomes free" wait_until 4 key_gone K
d=$(( $(ms) - t_kill )); echo "  K free (or taken by the waiter) ${d}ms after SIGKILL"
check "the waiting run -w 5s gets K" wait_until 6 bg_done "$W"
dw=$(( $(cat "$W.t") - t_kill )); echo "  the waiter finished ${dw}ms after SIGKILL"
check "the waiter exits 0 (got $(bg_rc "$W"))" test "$(bg_rc "$W")" = 0
check "the waiter's command ran, and no process of the killed tree ran beside it ($(tr '\n' ' ' <"$W.out"))" \
  test "$(cat "$W.out")" = got-it
# The supervisor releases at once (idle: ~100ms); at worst the 2s lease ends.
# The bound adds 2s for a loaded machine: a waiter that missed both would end
# at its -w 5s.
check "the waiter got K by the lease end (${dw}ms <= TTL + 2s = 4000ms)" test "$dw" -le 4000
check "K is free at the end" key_gone K

# --on-lost ignore: the child is not killed with rlock
T=$TEST_TMP/ign
bg "$T" run K2 --ttl 2s --on-lost ignore -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
child=$(pid_of "$T.sh.pid")
check "--on-lost ignore: K2 is held" key_there K2
kill -9 "$BG_PID"
check "--on-lost ignore: rlock is dead" wait_until 2 bg_done "$T"
sleep 0.5
check "--on-lost ignore: the child survives rlock's SIGKILL" alive "$child"
check "--on-lost ignore: K2 is still freed within TTL" wait_until 3 key_gone K2
kill -9 "$child" 2>/dev/null

finish
