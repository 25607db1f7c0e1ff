#!/usr/bin/env bash
# One URL per -u (issue 43), against two real servers: the word after a -u URL
# is the subcommand or NAME, never a second master (`-u A B status` is an
# unknown command, `run -u A N -- true` runs on A, `status -u A N` reads N on A);
# -u repeated is a Redlock over both; a comma list after one -u is refused,
# saying how to give several, with nothing of its password. And the other
# misleading errors: an option followed by "--", and -E's value.
. "$(dirname "$0")/lib.sh"
start_redis; A_PORT=$REDIS_PORT; A="redis://127.0.0.1:$A_PORT"
start_redis; B_PORT=$REDIS_PORT; B="redis://127.0.0.1:$B_PORT"
unset RLOCK_URL
on() { redis-cli -p "$1" "${@:2}"; }

r -u "$A" "$B" status
expect_rc 64 "-u A B status: B is not a second master"
check "it says a URL stands where the subcommand goes, and one -u takes one URL" \
  grep -qF "unknown command: a URL stands where the subcommand goes, and one -u takes one URL: give -u before each" <<<"$ERR"
check "one error line" one_err_line
r -u "$A" "redis://:hunter2@127.0.0.1:$B_PORT" status
expect_rc 64 "-u A B-with-a-password status"
check "the password is not in the error" eval '! grep -q hunter2 <<<"$ERR"'

r run -u "$A" N -- sh -c 'redis-cli -p "$1" HLEN N' sh "$A_PORT"
expect_rc 0 "run -u A N -- CMD: N is the lock's name, not a URL"
check "CMD ran with the lock held on A (HLEN 2: owner and record)" test "$OUT" = 2
check "nothing on B" test "$(on "$B_PORT" EXISTS N)" = 0

r acquire -u "$A" N --owner tok --ttl 1m
expect_rc 0 "acquire -u A N"
r status -u "$A" N
expect_rc 0 "status -u A N: N is a lock name (held: 0)"
r status -u "$B" N
expect_rc 1 "status -u B N: free there (1)"
r release -u "$A" N --owner tok
expect_rc 0 "release -u A N"

r -u "$A" acquire -u "$B" R --owner tok --ttl 1m --json
expect_rc 0 "-u A ... -u B: a Redlock over both"
check "the lock is on A and on B" test "$(on "$A_PORT" EXISTS R)/$(on "$B_PORT" EXISTS R)" = 1/1
check "acquire --json names two nodes" test "$(jget "$OUT" nodes | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
r -u "$A" -u "$B" release R --owner tok
expect_rc 0 "release from both"

r -u "redis://:hunter2@127.0.0.1:$A_PORT,$B" status
expect_rc 64 "a comma list after one -u"
check "it says one -u takes one URL, and how to give several" \
  grep -qF "one -u takes one URL, and -u 1 of 1 is a comma-separated list; for a Redlock give -u once per master" <<<"$ERR"
check "no password in the error" eval '! grep -q hunter2 <<<"$ERR"'
check "one error line" one_err_line
RLOCK_URL="$A,$B" r acquire L --owner tok --ttl 1m
expect_rc 0 "RLOCK_URL is still a comma-separated list (a Redlock)"
check "L on A and B" test "$(on "$A_PORT" EXISTS L)/$(on "$B_PORT" EXISTS L)" = 1/1

r -u "$A" run N -w -- true
expect_rc 64 "run N -w -- true"
check "it says -w needs a duration ($ERR)" \
  grep -qF "rlock: -w: needs a duration (500ms, 30s, 5m, 1h30m, 1d) after it, and got '--'" <<<"$ERR"
r -u "$A" -E abc run N -- true
expect_rc 64 "-E abc"
check "it says what -E takes ($ERR)" grep -qF -- '--conflict-exit-code: "abc" is not an exit code (-E takes a whole number from 0 to 255' <<<"$ERR"
finish
