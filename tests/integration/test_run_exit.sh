#!/usr/bin/env bash
# run: the child's exit status passes through (0, 7, 126, 127, 128+N), stdout is
# the child's output byte for byte, stdin reaches the child, the child's
# environment carries RLOCK_NAME/OWNER/FENCE/URL, and runs leave no key behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# --- exit codes
r run X -- true
expect_rc 0 "run -- true"
check "run -- true: nothing on stdout" test ! -s "$TEST_TMP/out"
r run X -- sh -c 'exit 7'
expect_rc 7 "run -- sh -c 'exit 7' passes 7 through"
check "exit 7: nothing on stdout" test ! -s "$TEST_TMP/out"
printf '#!/bin/sh\necho should-not-run\n' >"$TEST_TMP/noexec"
chmod 644 "$TEST_TMP/noexec"
r run X -- "$TEST_TMP/noexec"
expect_rc 126 "run of a non-executable file"
check "126: nothing on stdout" test ! -s "$TEST_TMP/out"
check "126: an error line on stderr" test -n "$ERR"
check "126: the lock is released" key_gone X
r run X -- rlock-no-such-command-xyz
expect_rc 127 "run of a missing command"
check "127: nothing on stdout" test ! -s "$TEST_TMP/out"
check "127: an error line on stderr naming the command" eval 'printf "%s" "$ERR" | grep -q rlock-no-such-command-xyz'
check "127: the lock is released" key_gone X
r run X -- sh -c 'kill -9 $$'
expect_rc 137 "child killed by SIGKILL -> 128+9"
check "137: the lock is released" key_gone X
r run X -- sh -c 'kill -USR1 $$'
expect_rc 138 "child killed by SIGUSR1 -> 128+10"
r run X -- sh -c 'kill -TERM $$'
expect_rc 143 "child killed by SIGTERM (not from rlock) -> 128+15"
r run X -- sh -c 'exit 255'
expect_rc 255 "exit 255 passes through"
r run X -- "$TEST_TMP"
expect_rc 126 "run of a directory"
r run X -- ./rlock-no-such-file
expect_rc 127 "run of a missing relative path"
check "no key X left after the failed starts" key_gone X

# --- the child starts with default signal handling (rlock's own SIGPIPE
# and blocked signals do not leak into it)
out=$(env --default-signal "$RLOCK" run X -- bash -c 'grep -E "^Sig(Blk|Ign):" /proc/self/status | tr -s "\t" " " | tr "\n" " "; yes | head -n1 >/dev/null; echo "pipe=${PIPESTATUS[0]}"' 2>/dev/null)
check "the child has no blocked or ignored signals ($out)" test "${out%%pipe=*}" = "SigBlk: 0000000000000000 SigIgn: 0000000000000000 "
check "SIGPIPE kills a writer in the child as usual (${out##* })" test "${out##* }" = pipe=141

# --- stdout is exactly the child's output
printf 'line one\n\n  two\tthree\nno newline at end' >"$TEST_TMP/expected"
r run X -- cat "$TEST_TMP/expected"
expect_rc 0 "run -- cat FILE"
check "stdout equals the child's output byte for byte" cmp -s "$TEST_TMP/out" "$TEST_TMP/expected"
r run X -- sh -c 'echo to-stderr >&2; printf out'
check "stdout has only the child's stdout" test "$(cat "$TEST_TMP/out")" = out
check "the child's stderr reaches stderr" eval 'printf "%s" "$ERR" | grep -qx to-stderr'
r -v run X -- printf 'abc'
check "-v: stdout still only the child's output" test "$(cat "$TEST_TMP/out")" = abc
head -c 200000 /dev/urandom >"$TEST_TMP/big"
"$RLOCK" run X -- cat "$TEST_TMP/big" >"$TEST_TMP/bigout" 2>/dev/null
check "200 kB of binary output pass through unchanged" cmp -s "$TEST_TMP/bigout" "$TEST_TMP/big"

# --- stdin passes through
out=$(echo hi | "$RLOCK" run X -- cat 2>"$TEST_TMP/err"); RC=$?
expect_rc 0 "echo hi | rlock run X -- cat"
check "the child read stdin ('$out')" test "$out" = hi
out=$(printf 'a\nb\nc\n' | "$RLOCK" run X -- wc -l 2>/dev/null)
check "the child reads stdin to its end ('$out')" test "$(echo $out)" = 3

# --- the child's environment
E=$TEST_TMP/env
r run envlock -- sh -c 'printf "%s\n" "$RLOCK_NAME" "$RLOCK_OWNER" "$RLOCK_FENCE" "$RLOCK_URL" >"$1"; redis-cli -h 127.0.0.1 -p "$2" HGET envlock rlock:meta >"$1.meta"; redis-cli -h 127.0.0.1 -p "$2" HGET envlock "$RLOCK_OWNER" >"$1.count"; redis-cli -h 127.0.0.1 -p "$2" GET "redisson_lock_token:{envlock}" >"$1.token"' sh "$E" "$REDIS_PORT"
expect_rc 0 "run writing its environment"
name=$(sed -n 1p "$E"); owner=$(sed -n 2p "$E"); fence=$(sed -n 3p "$E"); url=$(sed -n 4p "$E")
check "RLOCK_NAME is the lock name ('$name')" test "$name" = envlock
check "RLOCK_OWNER is set ('$owner')" test -n "$owner"
check "RLOCK_OWNER is the field holding the lock during the run" test "$(cat "$E.count")" = 1
meta_fence=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["fence"])' <"$E.meta" 2>/dev/null)
check "RLOCK_FENCE ('$fence') equals the fence in rlock:meta ('$meta_fence')" test -n "$fence" -a "$fence" = "$meta_fence"
check "RLOCK_FENCE equals the RFencedLock counter ('$(cat "$E.token")')" test "$fence" = "$(cat "$E.token")"
check "RLOCK_URL is the URL in use ('$url')" test "$url" = "$RLOCK_URL"
check "envlock is released" key_gone envlock

r run envlock -- sh -c 'echo "$RLOCK_FENCE"'
check "the next run gets the next fence ($((fence + 1)))" test "$OUT" = "$((fence + 1))"

RLOCK_OWNER=my-owner-token "$RLOCK" run envlock -- sh -c 'echo "$RLOCK_OWNER"; redis-cli -h 127.0.0.1 -p "$1" HGET envlock my-owner-token' sh "$REDIS_PORT" >"$TEST_TMP/o2" 2>/dev/null
check "RLOCK_OWNER from the environment is the owner token" test "$(cat "$TEST_TMP/o2")" = "$(printf 'my-owner-token\n1')"

url2="redis://127.0.0.1:$REDIS_PORT/0"
out=$(env -u RLOCK_URL -u REDIS_URL "$RLOCK" -u "$url2" run envlock -- sh -c 'echo "$RLOCK_URL"' 2>/dev/null)
check "with -u URL the child's RLOCK_URL is that URL ('$out')" test "$out" = "$url2"

# --- twice in a row, nothing left behind
r run Y -- true
expect_rc 0 "first rlock run Y -- true"
r run Y -- true
expect_rc 0 "second rlock run Y -- true"
check "no key Y left (EXISTS Y = 0)" key_gone Y
check "no key X left" key_gone X

finish
