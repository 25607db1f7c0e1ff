#!/usr/bin/env bash
# run's guardian (issue 21; run::Guarded, src/guardian/guardian.c): CMD is not
# rlock's child but a small program's, executed from a memfd, which is a child
# subreaper with a parent-death signal. rlock (the process the caller started)
# takes, renews and releases the lock; the guardian holds nothing of rlock's
# memory and no password, reports CMD's end, and when rlock is SIGKILLed
# executes rlock again, which kills CMD's tree and releases the lock. If the
# guardian itself is killed, rlock stops CMD and releases.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
REDIS_AUTH_ARGS="-a pw-Gu4rd --no-auth-warning"
start_redis --requirepass pw-Gu4rd
unset REDIS_URL REDISCLI_AUTH RLOCK_PASSWORD_FILE RLOCK_PASSWORD
SECRET=pw-Gu4rd
URL="redis://:$SECRET@127.0.0.1:$REDIS_PORT"
count_of() { rcli HVALS "$1" | grep -x '[0-9]*'; }
env_of() { tr '\0' '\n' <"/proc/$1/environ"; }
holds_fd_to() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q "$2"; }

T=$TEST_TMP/g
BG_ENV=(RLOCK_TEST_MARK=marked)
bg "$T" -u "$URL" run G --ttl 3s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
rlock_pid=$BG_PID
sh_pid=$(pid_of "$T.sh.pid")
check "G is held" wait_until 5 key_there G
guardian=$(pgrep -P "$rlock_pid" | head -1)
check "rlock has one child, the guardian ($guardian)" test -n "$guardian"
check "... named rlock-guardian" test "$(cat "/proc/$guardian/comm" 2>/dev/null)" = rlock-guardian
check "... the small program ($(readlink "/proc/$guardian/exe"))" \
  runs_program "$guardian" '/memfd:rlock-guardian.*'
if [ -z "$RLOCK_EMULATOR" ]; then
  check "... which maps no file (no copy of rlock's text)" \
    test "$(awk '/^RssFile:/ { print $2 }' "/proc/$guardian/status")" = 0
else
  # The emulator's own text is mapped: what is left to check is rlock's.
  check "... which maps no copy of rlock's text (under $RLOCK_EMULATOR)" \
    bash -c '! grep -qF "$2" "/proc/$1/maps"' _ "$guardian" "$(readlink -f "$RLOCK")"
fi
keeper=$(awk '{ print $4 }' "/proc/$sh_pid/stat")
check "CMD's parent is the guardian's keeper, its child ($keeper)" \
  test "$(awk '{ print $4 }' "/proc/$keeper/stat" 2>/dev/null)" = "$guardian"
check "... named rlock-guardian too" test "$(cat "/proc/$keeper/comm" 2>/dev/null)" = rlock-guardian
check "the guardian is in a process group of its own, not rlock's" \
  test "$(ps -o pgid= -p "$guardian" | tr -d ' ')" = "$guardian"
check "... which the keeper shares" test "$(ps -o pgid= -p "$keeper" | tr -d ' ')" = "$guardian"
check "... in a process group of its own" test "$(ps -o pgid= -p "$sh_pid" | tr -d ' ')" = "$sh_pid"
check "the lock's record names rlock's pid" grep -qF "\"pid\":$rlock_pid," <(rcli HGET G rlock:meta)
check "no password in the guardian's command line or environment" \
  bash -c '! grep -qaF "$2" "/proc/$1/environ" "/proc/$1/cmdline"' _ "$guardian" "$SECRET"
check "no password in CMD's environment" bash -c '! grep -qaF "$2" "/proc/$1/environ"' _ "$sh_pid" "$SECRET"
check "CMD has the caller's environment, not the guardian's state" \
  eval 'env_of "$sh_pid" | grep -qx RLOCK_TEST_MARK=marked && ! env_of "$sh_pid" | grep -q "^RLOCK_GUARDIAN="'
check "the guardian holds what rlock needs after its death (a memfd)" holds_fd_to "$guardian" 'memfd:rlock-release'
check "... and CMD does not" bash -c '! ls -l "/proc/$1/fd" | grep -q memfd' _ "$sh_pid"
# The image's fd is open across the guardian's exec (an emulator without
# binfmt_misc's O flag opens it by path after the exec): the guardian closes it.
check "neither the guardian nor its keeper keeps its image open" \
  bash -c '! ls -l "/proc/$1/fd" "/proc/$2/fd" | grep -q "memfd:rlock-guardian"' _ "$guardian" "$keeper"
grep -E '^(VmRSS|RssAnon)' "/proc/$guardian/status" | tr -s ' \n' ' ' | sed 's/^/  guardian: /'; echo
grep -E '^(VmRSS|RssAnon)' "/proc/$rlock_pid/status" | tr -s ' \n' ' ' | sed 's/^/  rlock: /'; echo

# SIGTERM to rlock reaches CMD once; the lock is released, the guardian gone.
kill -TERM "$rlock_pid"
check "SIGTERM to rlock: rlock ends" wait_until 5 bg_done "$T"
check "... CMD was stopped" wait_until 2 dead "$sh_pid"
check "... with CMD's status 128+15 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 143
check "... G was released" key_gone G
check "... and the guardian is gone" wait_until 2 dead "$guardian"
BG_ENV=()

# rlock SIGKILLed: the guardian executes rlock again, which kills CMD's tree,
# releases at once (not at the lease's end) and says so.
T=$TEST_TMP/k
bg "$T" -u "$URL" run G2 --ttl 20s -- sh -c 'echo $$ >$1.sh.pid; sh -c "echo \$\$ >$1.gc.pid; exec sleep 600" & wait' sh "$T"
rlock_pid=$BG_PID
sh_pid=$(pid_of "$T.sh.pid"); gc_pid=$(pid_of "$T.gc.pid")
check "G2 is held" wait_until 5 key_there G2
guardian=$(pgrep -P "$rlock_pid" | head -1)
kill -9 "$rlock_pid"
check "rlock SIGKILLed: CMD is killed" wait_until 2 dead "$sh_pid"
check "... and its child" wait_until 2 dead "$gc_pid"
check "... G2 is released at once (TTL 20s)" wait_until 3 key_gone G2
check "... the guardian is gone" wait_until 2 dead "$guardian"
check "... it says so, naming the lock ($(head -c 300 "$T.err"))" \
  grep -qF 'run "G2"' "$T.err"
check "... with no password in what it says" bash -c '! grep -qF "$1" "$2"' _ "$SECRET" "$T.err"

# Nested: a run inside a run re-enters its lock; SIGKILL of the inner rlock
# releases only the inner level: the outer run still holds the lock.
T=$TEST_TMP/n
bg "$T" -u "$URL" run G3 --ttl 20s -- sh -c '
  "$2" -u "$3" run G3 -- sh -c "echo \$PPID >$1.inner_guardian.pid; exec sleep 600" & echo $! >$1.inner.pid
  wait; echo inner-ended; sleep 600' sh "$T" "$RLOCK" "$URL"
inner=$(pid_of "$T.inner.pid")
pid_of "$T.inner_guardian.pid" >/dev/null
check "nested: G3 re-entered (count 2)" wait_until 3 eval '[ "$(count_of G3)" = 2 ]'
kill -9 "$inner"
check "nested: inner rlock SIGKILLed, its level released (count 1)" wait_until 3 eval '[ "$(count_of G3)" = 1 ]'
check "... the outer run goes on" wait_until 2 grep -q inner-ended "$T.out"
sleep 0.3
check "... still holding G3 with count 1" test "$(count_of G3)" = 1
kill -TERM "$BG_PID"
check "... and ends on SIGTERM, releasing it" wait_until 5 key_gone G3

# The guardian is started before the lock is requested (its exec overlaps the
# request) and starts CMD only on rlock's go. A run waiting for a held lock has
# its guardian and no CMD; SIGKILLed while waiting, it leaves nothing: the
# guardian exits without releasing anything (it took nothing).
T=$TEST_TMP/w
rcli HSET G8 holder-token 1 >/dev/null
rcli PEXPIRE G8 20000 >/dev/null
bg "$T" -u "$URL" run -w 20s G8 -- sh -c 'echo ran >$1.ran' sh "$T"
rlock_pid=$BG_PID
guardian_of() { pgrep -P "$1" -x rlock-guardian; }
check "waiting: rlock already has its guardian" wait_until 5 guardian_of "$rlock_pid"
guardian=$(guardian_of "$rlock_pid")
check "... whose one child, its keeper, started nothing" \
  eval 'k=$(pgrep -P "$guardian"); [ "$(echo "$k" | wc -w)" = 1 ] && test -z "$(pgrep -P "$k")"' 
kill -9 "$rlock_pid"
check "waiting rlock SIGKILLed: the guardian exits" wait_until 3 dead "$guardian"
check "... CMD never ran" test ! -e "$T.ran"
check "... the holder's lock is untouched" test "$(rcli HGET G8 holder-token)" = 1
check "... nothing said (took nothing, released nothing): $(head -c 200 "$T.err")" \
  bash -c '! grep -q "was killed" "$1"' _ "$T.err"
# -n on a held lock: busy (75), the guardian reaped, nothing started.
"$RLOCK" -q -u "$URL" run -n G8 -- sh -c 'echo ran >$1.ran2' sh "$T" 2>/dev/null &
busy_pid=$!
wait "$busy_pid"; rc=$?
check "-n on a held lock: 75 (got $rc)" test "$rc" = 75
check "... CMD never ran" test ! -e "$T.ran2"
check "... no guardian of it left, not even a zombie" test -z "$(pgrep -P "$busy_pid")$(pgrep -f "rlock-guardian .*$T.ran2")"

# --on-lost ignore: rlock SIGKILLed leaves CMD running, and the lock is released.
T=$TEST_TMP/i
bg "$T" -u "$URL" run G4 --ttl 20s --on-lost ignore -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
sh_pid=$(pid_of "$T.sh.pid")
check "--on-lost ignore: G4 is held" wait_until 5 key_there G4
kill -9 "$BG_PID"
check "--on-lost ignore: G4 is released at once" wait_until 3 key_gone G4
check "... CMD goes on" alive "$sh_pid"
kill -9 "$sh_pid"

# The guardian killed: its keeper, CMD's parent, goes on below rlock (two of
# rlock's processes still cover CMD); the keeper killed too: CMD dies with it,
# rlock stops what is left, releases, and says why.
T=$TEST_TMP/gk
bg "$T" -u "$URL" run G5 --ttl 20s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
rlock_pid=$BG_PID
sh_pid=$(pid_of "$T.sh.pid")
check "G5 is held" wait_until 5 key_there G5
guardian=$(pgrep -P "$rlock_pid" | head -1)
keeper=$(awk '{ print $4 }' "/proc/$sh_pid/stat")
kill -9 "$guardian"
if [ -n "$RLOCK_NO_SUBREAPER" ]; then
  # No subreaper: the keeper goes to init, not to rlock, takes that for rlock's
  # death and hands over: CMD's tree is stopped and G5 released all the same.
  echo "not checked without a subreaper: the keeper goes on below rlock when the guardian is killed"
  check "guardian SIGKILLed, no subreaper: CMD is stopped" wait_until 3 dead "$sh_pid"
  check "... G5 is released" wait_until 3 key_gone G5
  check "... rlock ends" wait_until 5 bg_done "$T"
  check "... exit 128+9 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 137
else
  check "guardian SIGKILLed: its keeper is now rlock's child" \
    wait_until 3 eval 'test "$(awk "{ print \$4 }" /proc/$keeper/stat 2>/dev/null)" = "$rlock_pid"'
  check "... CMD goes on" alive "$sh_pid"
  check "... G5 still held" key_there G5
  kill -9 "$keeper"
  check "keeper SIGKILLed as well: rlock ends" wait_until 5 bg_done "$T"
  check "... CMD was stopped" wait_until 2 dead "$sh_pid"
  check "... exit 128+9 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 137
  check "... G5 was released" key_gone G5
  check "... it says why" grep -q "guardian" "$T.err"
fi

# Where a memfd may not be executed (vm.memfd_noexec=2, set here in a pid
# namespace of its own: the setting is per namespace), rlock's own program file
# is the guardian and does the same job. Needs root (as CI runs).
if [ "$(id -u)" != 0 ]; then
  echo "skip: the no-memfd-exec case needs root (unshare -p)"
else
  inner='echo 2 >/proc/sys/vm/memfd_noexec || exit 90
"$1" -q -u "$2" run G6 --ttl 20s -- sleep 600 & r=$!
for _ in $(seq 200); do
  g=$(pgrep -P "$r" | head -1)
  [ -n "$g" ] && [ -n "$(pgrep -P "$g")" ] && break
  sleep 0.05
done
c=$(pgrep -P "$g")
runs_program "$g" "$(readlink -f "$1")" && echo "exe rlock"
echo "comm $(cat "/proc/$g/comm")"
kill -TERM "$r"; wait "$r"; echo "rc $?"
"$1" -q -u "$2" run G7 --ttl 20s -- sleep 600 & r=$!
for _ in $(seq 200); do
  g=$(pgrep -P "$r" | head -1)
  [ -n "$g" ] && k=$(pgrep -P "$g") && [ -n "$k" ] && c=$(pgrep -P "$k") && [ -n "$c" ] && break
  sleep 0.05
done
kill -9 "$r"
for _ in $(seq 100); do kill -0 "$c" 2>/dev/null || break; sleep 0.05; done
kill -0 "$c" 2>/dev/null && echo "cmd alive" || echo "cmd dead"
# The keeper, now rlock again, releases and exits; this shell is the
# namespace'"'"'s init: its exit would kill it first (a sanitizer build starts slowly).
for _ in $(seq 200); do
  st=$(sed "s/.*) //" "/proc/$k/stat" 2>/dev/null | cut -d" " -f1)
  [ -n "$st" ] && [ "$st" != Z ] || break
  sleep 0.05
done'
  timeout 60 unshare -p -f --mount-proc bash -c "$inner" _ "$RLOCK" "$URL" \
    >"$TEST_TMP/ns.out" 2>"$TEST_TMP/ns.err"
  echo "  no memfd exec: $(tr '\n' ' ' <"$TEST_TMP/ns.out")"
  check "no memfd exec: the guardian is rlock's own program file" grep -qx "exe rlock" "$TEST_TMP/ns.out"
  check "... named rlock-guardian" grep -qx "comm rlock-guardian" "$TEST_TMP/ns.out"
  check "... SIGTERM reaches CMD, which ends with 128+15" grep -qx "rc 143" "$TEST_TMP/ns.out"
  check "... and G6 was released" key_gone G6
  check "... rlock SIGKILLed: CMD is killed" grep -qx "cmd dead" "$TEST_TMP/ns.out"
  check "... and G7 released" wait_until 3 key_gone G7
  check "... it says so on stderr ($(head -c 300 "$TEST_TMP/ns.err"))" \
    grep -q 'run "G7".*was killed' "$TEST_TMP/ns.err"
fi

finish
