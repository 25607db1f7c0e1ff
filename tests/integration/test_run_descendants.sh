#!/usr/bin/env bash
# Every descendant of CMD is covered by the lock (hardening defect 8):
# - rlock SIGKILLed: a setsid grandchild and a double-forked daemon of CMD die
#   too, not only CMD's process group, and the lock is released at once by
#   rlock's supervising process;
# - CMD exits leaving background processes: rlock names them in a warning,
#   stops them (SIGTERM, SIGKILL after --kill-after) and only then releases;
#   the leftover sees the lock still held while it runs;
# - --wait-descendants: rlock keeps holding and renewing until the last one
#   exits, then releases, and exits with CMD's status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# procs_of MARK: live processes whose environment carries CASE_MARK=MARK.
procs_of() { procs_with_env "CASE_MARK=$1"; }
# count_comm MARK NAME: how many of them run NAME.
count_comm() { procs_of "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -cx "$2"; }
at_least() { [ "$(count_comm "$1" "$2")" -ge "$3" ]; }
none_of() { [ -z "$(procs_of "$1")" ]; }

# --- rlock SIGKILLed: setsid grandchild and double fork die with it (3 cases)
for c in 1 2 3; do
  mark=kill-$c-$$
  BG_ENV=(CASE_MARK="$mark")
  bg "$TEST_TMP/k$c" run --ttl 3s KD$c -- sh -c \
    'setsid sh -c "exec sleep 601" & (sh -c "exec sleep 602" &) ; exec sleep 600'
  if ! wait_until 5 at_least "$mark" sleep 3; then
    fail "case $c: the three sleeps did not start ($(procs_of "$mark" | wc -l) processes)"
    continue
  fi
  # The setsid grandchild is in a session of its own, the double fork's sleep
  # is an orphan: neither is in CMD's process group.
  kill -9 "$BG_PID"
  check "kill -9 of rlock, case $c: the setsid grandchild and the double-forked sleep die within 1s" \
    wait_until 1 none_of "$mark"
  for p in $(procs_of "$mark"); do kill -9 "$p"; done
  check "case $c: the lock is released at once (well before its 3s lease)" wait_until 1 key_gone KD$c
done
BG_ENV=()

# --- CMD exits and leaves a background job: warned, stopped, then released
T=$TEST_TMP/left
bg "$T" run --kill-after 2s LEFT -- sh -c '
  sh -c "trap \"redis-cli -p $1 EXISTS LEFT >$2.seen; exit 0\" TERM; echo \$\$ >$2.bg.pid; sleep 600 & wait" &
  sleep 0.3; exit 4' sh "$REDIS_PORT" "$T"
bgpid=$(pid_of "$T.bg.pid")
check "leftovers: rlock exits after stopping them" wait_until 5 bg_done "$T"
check "leftovers: exit 4, CMD's own status (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 4
check "leftovers: the background job got SIGTERM while the lock was still held (EXISTS LEFT = $(cat "$T.seen" 2>/dev/null))" \
  test "$(cat "$T.seen" 2>/dev/null)" = 1
check "leftovers: the background job is gone" wait_until 1 dead "$bgpid"
check "leftovers: the lock is released afterwards" key_gone LEFT
check "leftovers: one warning names the leftover processes" \
  grep -q "^rlock: warning: run \"LEFT\" .*CMD exited but left .*sh (pid $bgpid)" "$T.err"

# --- a leftover that ignores SIGTERM is SIGKILLed after --kill-after
T=$TEST_TMP/stubborn
t0=$(ms)
bg "$T" run --kill-after 1s STUB -- sh -c \
  'setsid sh -c "trap \"\" TERM; echo \$\$ >$1.gc.pid; while :; do sleep 0.05; done" & sleep 0.2' sh "$T"
gc=$(pid_of "$T.gc.pid")
check "stubborn leftover: rlock exits" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t0 ))
check "stubborn leftover: killed about --kill-after 1s after CMD ended (${d}ms between 1100 and 3000)" \
  between "$d" 1100 3000
check "stubborn leftover: gone" dead "$gc"
check "stubborn leftover: exit 0" test "$(bg_rc "$T")" = 0
check "stubborn leftover: lock released" key_gone STUB

# --- --wait-descendants: hold (and renew) until the last one exits
T=$TEST_TMP/wait
t0=$(ms)
bg "$T" run --ttl 1s --wait-descendants WAITD -- sh -c \
  '(sleep 2; touch "$1.done") & exit 3' sh "$T"
sleep 1.5 # past the 1s lease: only renewals keep it
check "--wait-descendants: the lock is still held after CMD exited and past one lease" key_there WAITD
check "--wait-descendants: rlock is still running" test ! -e "$T.rc"
check "--wait-descendants: rlock exits once the leftover is done" wait_until 4 bg_done "$T"
check "--wait-descendants: the leftover finished its work" test -e "$T.done"
d=$(( $(bg_t "$T") - t0 ))
check "--wait-descendants: held for the leftover's 2s (${d}ms >= 1900)" test "$d" -ge 1900
check "--wait-descendants: exit 3, CMD's status" test "$(bg_rc "$T")" = 3
check "--wait-descendants: released afterwards" key_gone WAITD
check "--wait-descendants: no warning (it was asked for)" bash -c '! grep -q warning "$1"' _ "$T.err"

# --- a plain run leaves nothing and says nothing
r run PLAIN -- sh -c 'sleep 0.1 | cat'
expect_rc 0 "a pipeline that finishes: exit 0"
check "a pipeline that finishes: nothing on stderr" test -z "$ERR"
finish
