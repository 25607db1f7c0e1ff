#!/usr/bin/env bash
# The guide's lock-only ACL user: the test creates the user from the line in
# docs/security.md, runs every subcommand, every mode, waiting and `run` under it; the line
# names every command rlock's scripts call; a user without evalsha, or without a
# command a script calls, gets 77 naming it; the password never shows.
. "$(dirname "$0")/lib.sh"
start_redis
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PW=acl-Pw-7c41e
H="127.0.0.1:$REDIS_PORT"

. "$(dirname "$0")/acl_helpers.sh"
line=$ACL_LINE
check "$ACL_DOC has the ACL SETUSER line" test -n "$line"

# setuser USER [EXTRA RULE...]: the guide's line for USER, its password set to $PW
setuser() { acl_setuser "$1" '' "${@:2}"; }
check "the guide's line is accepted by Redis" test "$(setuser rlock)" = OK
# One home for the line: a second copy would drift from the one tested here.
for other in README.md man/rlock.1 $(cd "$SRC" && ls docs/*.md | grep -vxF "$ACL_DOC"); do
  check "the ACL line is written only in $ACL_DOC, not in $other" \
    eval '! sed "s/\\\\-/-/g" "$SRC/$other" | grep -q "^ACL SETUSER rlock on "'
done

# Every command rlock's scripts call (as compiled into the binary) is in the line.
missing=""
for cmd in $("$RLOCK" --version >/dev/null; cat "$SRC"/lua/*.lua "$SRC"/lua/lib/*.lua 2>/dev/null |
  grep -oE "redis.p?call\('[A-Za-z]*'" | sed -E "s/redis.p?call\('//; s/'//" | tr 'A-Z' 'a-z' | sort -u); do
  grep -qw -- "+$cmd" <<<"$line" || missing="$missing $cmd"
done
check "the line allows every command the scripts call (missing:${missing:- none})" test -z "$missing"

U="redis://rlock:$PW@$H"
ALL_OUT=$TEST_TMP/all.out
ra() { r -u "$U" "$@"; printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL_OUT"; }

# --- every subcommand and run, each mode, waiting
ra acquire lock:a --ttl 20s
expect_rc 0 "acquire as the lock-only user"
TOK=$OUT
ra renew lock:a --owner "$TOK"
expect_rc 0 "renew"
ra status lock:a
expect_rc 0 "status NAME"
ra status
expect_rc 0 "status (SCAN)"
check "status lists lock:a" grep -q '^lock:a ' <<<"$OUT"
ra status --match 'lock:*' --json
expect_rc 0 "status --match --json"
ra release lock:a --owner "$TOK"
expect_rc 0 "release"
ra acquire lock:b
ra force-unlock lock:b
expect_rc 0 "force-unlock"
ra run lock:r -- true
expect_rc 0 "run"
ra run --ttl 900ms lock:r2 -- sleep 1.2
expect_rc 0 "run with a renewal (TTL 900ms, CMD 1.2s)"
ra run lock:m1 lock:m2 -- true
expect_rc 0 "run over two names"
ra run --fair lock:f -- true
expect_rc 0 "run --fair"
ra run --once-per 1d lock:once -- true
expect_rc 0 "run --once-per (records rlock_done:{lock:once})"
check "the once-per record was written" test "$(rcli EXISTS 'rlock_done:{lock:once}')" = 1
ra run --once-per 1d lock:once -- false
expect_rc 0 "run --once-per again: done in this window, CMD not run"
ra run -s lock:rw -- true
expect_rc 0 "run -s"
ra run --write lock:rw -- true
expect_rc 0 "run --write"
ra run --limit 2 lock:sem -- true
expect_rc 0 "run --limit 2"
ra status lock:sem lock:rw lock:f
expect_rc 1 "status of free locks of every layout (1: free)"
ra check lock:once --done-within 1h --held-longer 1h,2h --ttl-none --waiters 1,2
expect_rc 0 "check (a monitoring plugin): nothing more than status needs"
ra status --format openmetrics --match 'lock:*'
expect_rc 0 "status --format openmetrics"
# waiting: SUBSCRIBE on each layout's channel, woken by a release
for mode in "" --fair -s --limit=1; do
  ra acquire lock:w $mode --ttl 20s --owner holder
  expect_rc 0 "hold lock:w ${mode:-exclusive}"
  bg "$TEST_TMP/w" -u "$U" run lock:w $mode -w 10s -- true
  sleep 0.3
  ra release lock:w $mode --owner holder
  expect_rc 0 "release lock:w ${mode:-exclusive}"
  check "the ${mode:-exclusive} waiter is woken and runs" wait_until 5 bg_done "$TEST_TMP/w"
  check "... exit 0 (got $(bg_rc "$TEST_TMP/w"))" test "$(bg_rc "$TEST_TMP/w")" = 0
  cat "$TEST_TMP/w.out" "$TEST_TMP/w.err" >>"$ALL_OUT"
done
ra acquire lock:ww --write --ttl 20s --owner holder
bg "$TEST_TMP/w" -u "$U" run lock:ww --write -w 10s -- true
sleep 0.3
ra release lock:ww --write --owner holder
check "the --write waiter is woken and runs" wait_until 5 bg_done "$TEST_TMP/w"
check "... exit 0 (got $(bg_rc "$TEST_TMP/w"))" test "$(bg_rc "$TEST_TMP/w")" = 0

# --- history (issue 23): written inside the scripts (xadd), read back (xrevrange)
ra history lock:a
expect_rc 0 "history as the lock-only user"
check "the events were written under the ACL (acquired renewed? released)" \
  grep -q ' acquired owner=' <<<"$OUT"
check "... and released" grep -q ' released owner=' <<<"$OUT"
ra history lock:once
check "run --once-per's once-done and skipped are in the history" \
  test -n "$(grep ' once-done ' <<<"$OUT")" -a -n "$(grep ' skipped ' <<<"$OUT")"
setuser noxadd -xadd >/dev/null
r -u "redis://noxadd:$PW@$H" run lock:nx -- true
expect_rc 0 "the line minus xadd: run still works (the history is best effort)"
check "... and wrote no history" test "$(rcli EXISTS 'rlock_log:{lock:nx}')" = 0
printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL_OUT"

# --- turns (issue 32): a user made before them (no ~rlock_turns: pattern) still
# locks and waits; rlock says once that every release wakes every waiter
acl_setuser noturns 's/ ~rlock_turns:{lock:\*//' >/dev/null
NT="redis://noturns:$PW@$H"
r -u "$NT" acquire lock:t --ttl 20s --owner holder
expect_rc 0 "the line minus ~rlock_turns: acquire"
check "... and says once that every release wakes every waiter" test "$(grep -c 'waiters are woken all at once' <<<"$ERR")" = 1
bg "$TEST_TMP/t" -u "$NT" run lock:t -w 10s -- true
sleep 0.5
check "its waiter subscribed on the release channel (no turns for it)" test "$(rcli PUBSUB NUMSUB 'redisson_lock__channel:{lock:t}' | sed -n 2p)" = 1
check "no turns' set was made" test "$(rcli EXISTS 'rlock_turns:{lock:t}')" = 0
r -u "$NT" release lock:t --owner holder
expect_rc 0 "... release"
check "the waiter is woken and runs" wait_until 5 bg_done "$TEST_TMP/t"
check "... exit 0 (got $(bg_rc "$TEST_TMP/t"))" test "$(bg_rc "$TEST_TMP/t")" = 0
check "the waiter warned once that every release wakes every waiter" \
  test "$(grep -c 'waiters are woken all at once' "$TEST_TMP/t.err")" = 1
check "... naming the ACL rule to add" grep -qF 'ACL SETUSER noturns ~rlock_turns:{lock:t}' "$TEST_TMP/t.err"
printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL_OUT"; cat "$TEST_TMP/t.out" "$TEST_TMP/t.err" >>"$ALL_OUT"

# --- outside its key patterns: denied
ra acquire other:x
expect_rc 77 "a name outside lock:* is denied"
check "no key other:x was made" test "$(rcli EXISTS other:x)" = 0

# --- a user without one permission: 77, naming it
setuser noeval -evalsha >/dev/null
r -u "redis://noeval:$PW@$H" acquire lock:n
expect_rc 77 "the line minus evalsha"
check "the error names evalsha" grep -qi "evalsha" <<<"$ERR"
printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL_OUT"
setuser notime -time >/dev/null
r -u "redis://notime:$PW@$H" acquire lock:n
expect_rc 77 "the line minus time (called inside the acquire script)"
check "the error names the missing permission (+time)" grep -q "calls TIME there: the user needs +time" <<<"$ERR"
check "nothing was changed" test "$(rcli EXISTS lock:n 'redisson_lock_token:{lock:n}')" = 0
printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL_OUT"

check "the password never appears on stdout or stderr of any of those runs" eval '! grep -qF -- "$PW" "$ALL_OUT"'

finish
