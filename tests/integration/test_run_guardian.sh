#!/usr/bin/env bash
# run's guardian (the process the caller started, which forks the supervisor
# rlock-run) becomes a small program right after the fork (issue 21;
# Guardian::become_small, src/guardian/guardian.c executed from a memfd): it
# keeps its pid, name, command line, children and signals, but none of what
# rlock did before the fork: not its memory (parsing, heap, mapped text), not
# its environment, so not the password rlock was given in RLOCK_PASSWORD
# either. It still passes signals on and returns CMD's status; if the
# supervisor is killed it hands over to rlock's own image, which kills CMD's
# tree and says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
REDIS_AUTH_ARGS="-a pw-Gu4rd --no-auth-warning"
start_redis --requirepass pw-Gu4rd
unset REDIS_URL REDISCLI_AUTH RLOCK_PASSWORD_FILE
SECRET=pw-Gu4rd
env_of() { tr '\0' '\n' <"/proc/$1/environ"; }

T=$TEST_TMP/g
BG_ENV=("RLOCK_PASSWORD=$SECRET" RLOCK_TEST_MARK=marked)
bg "$T" run G --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
guardian=$BG_PID
sh_pid=$(pid_of "$T.sh.pid")
check "G is held" wait_until 5 key_there G
supervisor=$(pgrep -P "$guardian" | head -1)
check "the guardian has one child, the supervisor ($supervisor)" test -n "$supervisor"
check "the supervisor is named rlock-run" test "$(cat "/proc/$supervisor/comm" 2>/dev/null)" = rlock-run
re_executed() { ! grep -q "^RLOCK_TEST_MARK=" <(tr "\0" "\n" <"/proc/$1/environ"); }
check "the guardian was re-executed: none of the caller's environment" wait_until 2 re_executed "$guardian"
check "... as the small program ($(readlink "/proc/$guardian/exe"))" \
  grep -q '^/memfd:rlock-guardian' <(readlink "/proc/$guardian/exe")
check "... which maps no file (no copy of rlock's text)" \
  test "$(awk '/^RssFile:/ { print $2 }' "/proc/$guardian/status")" = 0
# Between the exec and the small program's first step the kernel names it after
# the memfd's fd number. Its name is back once it runs.
own_name() { test "$(cat "/proc/$guardian/comm")" = "$(basename "$RLOCK" | cut -c1-15)"; }
check "the guardian keeps its name ($(cat "/proc/$guardian/comm"))" wait_until 2 own_name
check "the guardian keeps its command line" grep -qF "run G --ttl 3s -- sh -c" <(tr '\0' ' ' <"/proc/$guardian/cmdline")
check "the supervisor has the caller's environment (it renews with the password)" \
  grep -qx RLOCK_TEST_MARK=marked <(env_of "$supervisor")
check "the guardian's environment holds no password" \
  bash -c '! grep -qaF "$2" "/proc/$1/environ"' _ "$guardian" "$SECRET"
grep -E '^(VmRSS|RssAnon)' "/proc/$guardian/status" | tr -s ' \n' ' ' | sed 's/^/  guardian: /'; echo
grep -E '^(VmRSS|RssAnon)' "/proc/$supervisor/status" | tr -s ' \n' ' ' | sed 's/^/  supervisor: /'; echo

# It still passes a signal on: SIGTERM to the guardian ends CMD, the lock is released.
kill -TERM "$guardian"
check "SIGTERM to the guardian: rlock ends" wait_until 5 bg_done "$T"
check "... CMD was stopped" wait_until 2 dead "$sh_pid"
check "... with CMD's status 128+15 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 143
check "... and G was released" key_gone G

# The supervisor SIGKILLed: the small guardian hands over to rlock's image, which
# kills CMD's tree and says so.
T=$TEST_TMP/k
bg "$T" run G2 --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
guardian=$BG_PID
sh_pid=$(pid_of "$T.sh.pid")
check "G2 is held" wait_until 5 key_there G2
supervisor=$(pgrep -P "$guardian" | head -1)
wait_until 2 re_executed "$guardian"
kill -9 "$supervisor"
check "supervisor killed: rlock ends" wait_until 5 bg_done "$T"
check "... CMD was killed by the guardian" wait_until 2 dead "$sh_pid"
check "... exit 128+9 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 137
check "... it says so, naming the lock" grep -qF 'run "G2"' "$T.err"
check "... and G2's record is left to its lease, not released by the guardian" key_there G2

# Where a memfd may not be executed (vm.memfd_noexec=2, set here in a pid
# namespace of its own: the setting is per namespace), the guardian stays
# rlock's own image and does the same job. Needs root (as CI runs).
if [ "$(id -u)" != 0 ]; then
  echo "skip: the no-memfd-exec case needs root (unshare -p)"
else
  inner='echo 2 >/proc/sys/vm/memfd_noexec || exit 90
"$1" run G3 --ttl 3s -- sleep 600 & g=$!
for _ in $(seq 200); do
  s=$(pgrep -P "$g" | head -1)
  [ -n "$s" ] && [ -n "$(pgrep -P "$s")" ] && break
  sleep 0.05
done
echo "exe $(readlink "/proc/$g/exe")"
echo "comm $(cat "/proc/$g/comm")"
kill -TERM "$g"; wait "$g"; echo "rc $?"'
  RLOCK_PASSWORD=$SECRET timeout 60 unshare -p -f --mount-proc bash -c "$inner" _ "$RLOCK" \
    >"$TEST_TMP/ns.out" 2>"$TEST_TMP/ns.err"
  echo "  no memfd exec: $(tr '\n' ' ' <"$TEST_TMP/ns.out")"
  check "no memfd exec: the guardian is rlock's own image" grep -qx "exe $(readlink -f "$RLOCK")" "$TEST_TMP/ns.out"
  check "... it passes SIGTERM on, CMD ends with 128+15" grep -qx "rc 143" "$TEST_TMP/ns.out"
  check "... and G3 was released" key_gone G3
  check "... nothing on stderr ($(head -c 300 "$TEST_TMP/ns.err"))" test ! -s "$TEST_TMP/ns.err"
fi

finish
