#!/usr/bin/env bash
# run --if-unavailable fail|skip|run when Redis cannot be reached to take the
# lock (a closed loopback port): 69 / 0 without running / CMD's status without
# a lock (RLOCK_UNLOCKED=1, RLOCK_FENCE empty) with a warning; a busy lock stays
# 75 whatever the choice; bad values are 64.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis
CLOSED="redis://127.0.0.1:$(free_port)" # nobody listens there
ENVF=$TEST_TMP/env

r -u "$CLOSED" run --if-unavailable skip J -- touch "$TEST_TMP/skip.ran"
expect_rc 0 "skip: exit 0"
check "skip: CMD did not run" test ! -e "$TEST_TMP/skip.ran"
check "skip: one 'rlock: warning:' line" eval '[[ $ERR == "rlock: warning: "*"not running CMD (--if-unavailable skip)" ]] && one_err_line'
r -q -u "$CLOSED" run --if-unavailable skip J -- touch "$TEST_TMP/skip.ran"
check "skip with -q: rc 0, silent, not run" test "$RC/$ERR" = 0/ -a ! -e "$TEST_TMP/skip.ran"

r -u "$CLOSED" run --if-unavailable run J -- sh -c 'env >"$1"; exit 7' sh "$ENVF"
expect_rc 7 "run: exits with CMD's status"
check "run: CMD ran" has_file "$ENVF"
check "run: RLOCK_UNLOCKED=1" grep -qx 'RLOCK_UNLOCKED=1' "$ENVF"
check "run: RLOCK_FENCE empty" grep -qx 'RLOCK_FENCE=' "$ENVF"
check "run: RLOCK_OWNER empty" grep -qx 'RLOCK_OWNER=' "$ENVF"
check "run: RLOCK_NAME set" grep -qx 'RLOCK_NAME=J' "$ENVF"
check "run: a loud warning" grep -q '^rlock: warning: .*RUNNING CMD WITHOUT THE LOCK' <<<"$ERR"
r -q -u "$CLOSED" run --if-unavailable run J -- true
check "run with -q: the warning still shows (rc $RC)" grep -q 'WITHOUT THE LOCK' <<<"$ERR"
# CMD without a lock still gets its own process group and its signals: SIGTERM
# to rlock reaches it (128+15 = 143).
bg "$TEST_TMP/sig" -u "$CLOSED" run --if-unavailable run J -- sh -c 'echo $$ >"$1"; exec sleep 30' sh "$TEST_TMP/sig.cmd.pid"
cmd_pid=$(pid_of "$TEST_TMP/sig.cmd.pid")
check "run: CMD runs in a process group of its own" test "$(ps -o pgid= -p "$cmd_pid" | tr -d ' ')" = "$cmd_pid"
kill -TERM "$BG_PID"
check "run: SIGTERM to rlock ends CMD and rlock" wait_until 5 bg_done "$TEST_TMP/sig"
check "run: exit 143 (got $(bg_rc "$TEST_TMP/sig"))" test "$(bg_rc "$TEST_TMP/sig")" = 143
check "run: CMD is gone" dead "$cmd_pid"
# A nested run that gets its lock does not inherit RLOCK_UNLOCKED.
r -u "$CLOSED" run --if-unavailable run J -- env RLOCK_URL="$RLOCK_URL" "$RLOCK" run K -- sh -c 'echo "[${RLOCK_UNLOCKED-unset}]" >"$1"' sh "$ENVF.nested"
check "a nested locked run has no RLOCK_UNLOCKED ($(cat "$ENVF.nested" 2>/dev/null))" grep -qx '\[unset\]' "$ENVF.nested"

r -u "$CLOSED" run --if-unavailable fail J -- touch "$TEST_TMP/fail.ran"
expect_rc 69 "fail: exit 69"
check "fail: CMD did not run" test ! -e "$TEST_TMP/fail.ran"
r -u "$CLOSED" run J -- touch "$TEST_TMP/fail.ran"
expect_rc 69 "default (fail): exit 69"

# A Redlock that cannot reach a majority (one live master of three): no quorum is 69,
# and --if-unavailable run runs CMD without the lock.
CLOSED2="redis://127.0.0.1:$(free_port)"
r -u "$CLOSED" -u "$CLOSED2" -u "$RLOCK_URL" run RL -- touch "$TEST_TMP/rl.ran"
check "Redlock without a quorum: 69, CMD not run (rc $RC)" test "$RC" = 69 -a ! -e "$TEST_TMP/rl.ran"
r -u "$CLOSED" -u "$CLOSED2" -u "$RLOCK_URL" run --if-unavailable run RL -- sh -c 'exit 7'
expect_rc 7 "Redlock without a quorum, --if-unavailable run: CMD's status"
check "... with the quorum named in the warning" grep -q 'quorum not reached.*WITHOUT THE LOCK' <<<"$ERR"
check "the live master's share of the lock was undone" key_gone RL

# Busy is not unavailable: 75 whatever --if-unavailable says.
r acquire B --ttl 20s
for choice in run skip; do
  r run --if-unavailable "$choice" B -- touch "$TEST_TMP/busy.ran"
  expect_rc 75 "busy with --if-unavailable $choice"
done
check "busy: CMD never ran" test ! -e "$TEST_TMP/busy.ran"
# Issue 19 defect 2: -E 69 remaps busy to 69, but busy is still not unavailable:
# the decision is made from what happened (the error's kind), never from the
# number the user chose. Before the fix `run` ran CMD without the lock and
# `skip` exited 0.
for choice in run skip; do
  r -E 69 run --if-unavailable "$choice" -n B -- touch "$TEST_TMP/busyE.ran"
  expect_rc 69 "-E 69, busy with --if-unavailable $choice: the remapped busy code"
  check "-E 69, busy with --if-unavailable $choice: a busy message, no 'WITHOUT THE LOCK' or skip" \
    eval '[[ $ERR == *busy* && $ERR != *"WITHOUT THE LOCK"* && $ERR != *"--if-unavailable skip"* ]]'
done
check "-E 69, busy: CMD never ran" test ! -e "$TEST_TMP/busyE.ran"
# ... and a real outage stays unavailable whatever -E says.
r -E 75 -u "$CLOSED" run --if-unavailable skip J -- touch "$TEST_TMP/skipE.ran"
check "-E 75, unreachable with skip: exit 0, not run (rc $RC)" test "$RC" = 0 -a ! -e "$TEST_TMP/skipE.ran"
# Auth errors are not unavailable: 77.
rcli CONFIG SET requirepass s3cret >/dev/null
r run --if-unavailable run A -- touch "$TEST_TMP/auth.ran"
expect_rc 77 "auth required with --if-unavailable run"
check "auth: CMD never ran" test ! -e "$TEST_TMP/auth.ran"
REDIS_AUTH_ARGS="-a s3cret --no-auth-warning" rcli CONFIG SET requirepass '' >/dev/null

for args in "--if-unavailable maybe" "--if-unavailable" "--if-unavailable ''"; do
  eval "r run $args X -- true"
  check "run $args: usage error 64, one line (rc $RC)" eval 'test "$RC" = 64 && one_err_line'
done
finish
