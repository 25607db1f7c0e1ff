#!/usr/bin/env bash
# Nothing about a lock leaves rlock that should not (hardening defect 5): no
# password in CMD's environment, in the holder record, in rlock's own command
# line (ps) during a run, in status text or JSON; and a nested `rlock run`
# under --password-file authenticates the way the outer one did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
REDIS_AUTH_ARGS="-a pw-S3cr3t --no-auth-warning"
start_redis --requirepass pw-S3cr3t
H="127.0.0.1:$REDIS_PORT"
unset RLOCK_URL REDIS_URL RLOCK_PASSWORD REDISCLI_AUTH RLOCK_PASSWORD_FILE
SECRET=pw-S3cr3t
no_secret_in() { ! grep -qaF "$SECRET" "$@"; }

# --- a URL with a password on the command line: CMD's environment
r -u "redis://:$SECRET@$H" run PW -- env
expect_rc 0 "run with a URL password"
printf '%s\n' "$OUT" >"$TEST_TMP/env"
check "CMD's environment holds no password" no_secret_in "$TEST_TMP/env"
check "CMD's RLOCK_URL is the URL without its password" grep -qxF "RLOCK_URL=redis://$H" "$TEST_TMP/env"
r -u "redis://default:$SECRET@$H/0" run PW -- sh -c 'echo "$RLOCK_URL"'
check "with a user: RLOCK_URL keeps the user and the db, drops the password ($OUT)" \
  test "$OUT" = "redis://default@$H/0"

# --- rlock's own command line during a long run, and the holder record
T=$TEST_TMP/long
bg "$T" -u "redis://:$SECRET@$H" run PWLONG -- sh -c 'sleep 30'
check "the long run holds PWLONG" wait_until 5 key_there PWLONG
tr '\0' ' ' </proc/"$BG_PID"/cmdline >"$TEST_TMP/cmdline"
echo "  ps shows: $(cat "$TEST_TMP/cmdline")"
check "/proc/PID/cmdline of the running rlock shows no password" no_secret_in "$TEST_TMP/cmdline"
check "... but still the rest of the URL" grep -qF "@$H" "$TEST_TMP/cmdline"
rcli HGET PWLONG rlock:meta >"$TEST_TMP/meta"
check "the holder record of run holds no password" no_secret_in "$TEST_TMP/meta"
kill -TERM "$BG_PID"; wait_until 5 bg_done "$T"

# acquire records its parent's command line: here a shell whose own command
# line has the URL, a NAME=VALUE password and a redis-cli -a password.
sh -c "\"\$0\" -u 'redis://:$SECRET@$H' acquire PWACQ --ttl 30s >/dev/null; : RLOCK_PASSWORD=$SECRET redis-cli -a $SECRET" "$RLOCK"
rcli HGET PWACQ rlock:meta >"$TEST_TMP/meta2"
echo "  recorded: $(cat "$TEST_TMP/meta2")"
check "the holder record of acquire (its parent's command line) holds no password" no_secret_in "$TEST_TMP/meta2"
check "... it names the program, its arguments as *** (issue 30)" grep -qF '"command":"sh *** ***' "$TEST_TMP/meta2"
sh -c "\"\$0\" --record-args -u 'redis://:$SECRET@$H' acquire PWACQ2 --ttl 30s >/dev/null; : RLOCK_PASSWORD=$SECRET redis-cli -a $SECRET" "$RLOCK"
rcli HGET PWACQ2 rlock:meta >"$TEST_TMP/meta3"
check "--record-args: the arguments, and still no password" no_secret_in "$TEST_TMP/meta3"
check "... it names the command, redacted" grep -qF 'RLOCK_PASSWORD=***' "$TEST_TMP/meta3"
RLOCK_PASSWORD=$SECRET r -u "redis://$H" status PWACQ
check "status text shows no password" no_secret_in <(printf '%s\n%s\n' "$OUT" "$ERR")
RLOCK_PASSWORD=$SECRET r -u "redis://$H" --json status
check "status --json shows no password" no_secret_in <(printf '%s\n%s\n' "$OUT" "$ERR")
RLOCK_PASSWORD=$SECRET r -v -u "redis://$H" status PWACQ
check "-v logs show no password" no_secret_in <(printf '%s\n%s\n' "$OUT" "$ERR")
r -u "redis://:$SECRET@$H/99" status
expect_rc 64 "a database that does not exist"
check "its error shows no password" no_secret_in <(printf '%s\n%s\n' "$OUT" "$ERR")

# --- nested runs authenticate as the outer one did
printf '%s\n' "$SECRET" >"$TEST_TMP/pwfile"
chmod 600 "$TEST_TMP/pwfile"
r -u "redis://$H" --password-file "$TEST_TMP/pwfile" run NEST -- sh -c \
  'echo "file=$RLOCK_PASSWORD_FILE"; "$1" run NEST -- sh -c "echo inner-ok"; env' sh "$RLOCK"
expect_rc 0 "nested run under --password-file"
check "the inner run re-entered and ran" grep -qx inner-ok <<<"$OUT"
check "CMD got RLOCK_PASSWORD_FILE, absolute" grep -qx "file=$TEST_TMP/pwfile" <<<"$OUT"
check "... and no password in its environment" no_secret_in <(printf '%s\n' "$OUT")
rl=$(readlink -f "$RLOCK")
(cd "$TEST_TMP" && RLOCK_URL="redis://$H" RLOCK_PASSWORD_FILE=pwfile "$rl" run NEST2 -- sh -c \
  'cd /; "$1" run NEST2 -- true && echo nested-from-env-ok' sh "$rl" >"$TEST_TMP/o" 2>&1)
check "RLOCK_PASSWORD_FILE from the environment works, also relative (made absolute for CMD)" \
  grep -qx nested-from-env-ok "$TEST_TMP/o"
RLOCK_PASSWORD=$SECRET r -u "redis://$H" run NEST3 -- sh -c '"$1" run NEST3 -- sh -c "echo \"\$RLOCK_PASSWORD\""' sh "$RLOCK"
check "a password the user put in RLOCK_PASSWORD passes through unchanged" test "$OUT" = "$SECRET"

# --- password files that cannot be right are usage errors, not an empty AUTH
mkdir "$TEST_TMP/pwdir"; : >"$TEST_TMP/empty"; chmod 600 "$TEST_TMP/empty"
r -u "redis://$H" --password-file "$TEST_TMP/pwdir" acquire PWX
expect_rc 64 "--password-file DIRECTORY"
check "... says it is a directory" grep -q "is a directory" <<<"$ERR"
r -u "redis://$H" --password-file "$TEST_TMP/empty" acquire PWX
expect_rc 64 "--password-file EMPTY"
check "... says it is empty" grep -q "is empty" <<<"$ERR"
printf '%s\n' "$SECRET" >"$TEST_TMP/open"
for mode in 644 640 604 660; do
  chmod "$mode" "$TEST_TMP/open"
  r -u "redis://$H" --password-file "$TEST_TMP/open" acquire PWX
  expect_rc 64 "--password-file with mode $mode"
  check "... says to chmod 600, names the file, not the password" \
    eval 'grep -q "chmod 600 $TEST_TMP/open" <<<"$ERR" && ! grep -qF -- "$SECRET" <<<"$ERR$OUT"'
done
chmod 400 "$TEST_TMP/open"
r -u "redis://$H" --password-file "$TEST_TMP/open" status PWX
expect_rc 1 "a 0400 password file is fine (PWX free)"
check "no lock was taken by those" key_gone PWX
finish
