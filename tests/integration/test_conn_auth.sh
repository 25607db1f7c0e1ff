#!/usr/bin/env bash
# Authentication: requirepass, the password sources, ACL users, NOAUTH/WRONGPASS/NOPERM -> 77,
# and the password never shown.
. "$(dirname "$0")/lib.sh"
REDIS_AUTH_ARGS="-a s3cret --no-auth-warning"   # for rcli (start_redis pings with it)
start_redis --requirepass s3cret
H="127.0.0.1:$REDIS_PORT"
export RLOCK_URL="redis://$H"
unset RLOCK_PASSWORD REDISCLI_AUTH

no_secret() { ! grep -qF -e s3cret -e wr0ngpw -e 'alicepw' -e 'bobpw' <<<"$OUT$ERR"; }

# --- no password / wrong password
# says_password_required: the last error says NOAUTH, that a password is required
# and how to give one; never Redis 7's "unauthenticated multibulk length", which
# it sends instead of NOAUTH for a command of more than 10 arguments (EVALSHA).
says_password_required() {
  grep -qF NOAUTH <<<"$ERR" && grep -qF 'requires a password' <<<"$ERR" &&
    grep -qF -- --password-file <<<"$ERR" && grep -qF RLOCK_PASSWORD <<<"$ERR" &&
    ! grep -qi multibulk <<<"$ERR"
}
r acquire P
expect_rc 77 "no password: NOAUTH"
check "no password: one error line naming the endpoint" bash -c '[[ $1 == "rlock: "* ]] && grep -qF "$2" <<<"$1"' _ "$ERR" "$H"
check "no password, acquire (Redis 7: multibulk refusal): says a password is required and how to give one" says_password_required
check "no password, acquire: one error line" one_err_line
echo "  $ERR"
r status
expect_rc 77 "status without password"
check "no password, status (plain NOAUTH): says a password is required and how to give one" says_password_required
r release P --owner o
expect_rc 77 "release without password"
r renew P --owner o
expect_rc 77 "renew without password"
r force-unlock P
expect_rc 77 "force-unlock without password"
r acquire P -w 2s
expect_rc 77 "acquire -w 2s without password"
check "no password, acquire -w: says a password is required" says_password_required
RLOCK_PASSWORD=wr0ngpw r -v acquire P
expect_rc 77 "wrong password (RLOCK_PASSWORD)"
check "a wrong password is not reported as a missing one" bash -c '! grep -qF "requires a password" <<<"$1"' _ "$ERR"
check "wrong password not shown (with -v)" no_secret
r -u "redis://:wr0ngpw@$H" -v acquire P
expect_rc 77 "wrong password in the URL"
check "wrong URL password not shown (with -v)" no_secret
echo "  $(grep -v '^rlock: [0-9:.]* [<>]' <<<"$ERR" | tail -1)"
check "nothing was written without the password" test "$(rcli DBSIZE)" = 0

# --- the right password, from each source
r -v -u "redis://:s3cret@$H" acquire P --owner url
expect_rc 0 "password in the URL"
check "password (URL) never shown with -v" no_secret
r -v -u "redis://:s3cret@$H" release P --owner url
expect_rc 0 "release with the URL password"
check "password (URL) never shown in release -v" no_secret

# A password in -u on the command line is warned about once (as redis-cli -a
# does; issue 19), never with the password; -q silences it; a URL from RLOCK_URL
# is not on the command line and gets no warning.
r -u "redis://:s3cret@$H" status
check "-u with a password: one warning, pointing to --password-file and RLOCK_PASSWORD (rc $RC)" \
  eval '[ "$(grep -c "^rlock: warning: Using a password with .-u. on the command line may not be safe; use --password-file or RLOCK_PASSWORD" <<<"$ERR")" = 1 ]'
check "... without the password" no_secret
r -q -u "redis://:s3cret@$H" status
check "-q: no warning (rc $RC)" test -z "$ERR"
RLOCK_URL="redis://:s3cret@$H" r status
check "RLOCK_URL with a password: no warning (rc $RC)" test -z "$ERR"
r -u "redis://$H" status
check "-u without a password: no warning" bash -c '! grep -q "Using a password" <<<"$1"' _ "$ERR"

RLOCK_PASSWORD=s3cret r -v acquire P --owner env
expect_rc 0 "password in RLOCK_PASSWORD"
check "password (RLOCK_PASSWORD) never shown with -v" no_secret
RLOCK_PASSWORD=s3cret r release P --owner env
expect_rc 0 "release with RLOCK_PASSWORD"

REDISCLI_AUTH=s3cret r -v acquire P --owner cli
expect_rc 0 "password in REDISCLI_AUTH"
check "password (REDISCLI_AUTH) never shown with -v" no_secret
REDISCLI_AUTH=s3cret r release P --owner cli
expect_rc 0 "release with REDISCLI_AUTH"

printf 's3cret\n' >"$TEST_TMP/pw"
chmod 600 "$TEST_TMP/pw"
r -v --password-file "$TEST_TMP/pw" acquire P --owner file --json
expect_rc 0 "--password-file (with a final newline)"
check "password (file) never shown with -v" no_secret
check "acquire --json parses" python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$OUT"
printf 's3cret' >"$TEST_TMP/pw2"
chmod 600 "$TEST_TMP/pw2"
r --password-file "$TEST_TMP/pw2" status P --json
expect_rc 0 "--password-file (no final newline), status"
check "status --json parses" python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$OUT"
check "status never shows the password" no_secret
r --password-file "$TEST_TMP/pw" release P --owner file
expect_rc 0 "release with --password-file"

# precedence: URL password wins over the file and the variables
RLOCK_PASSWORD=wr0ngpw REDISCLI_AUTH=wr0ngpw r -u "redis://:s3cret@$H" acquire Q --owner o
expect_rc 0 "URL password wins over RLOCK_PASSWORD/REDISCLI_AUTH"
printf 'wr0ngpw\n' >"$TEST_TMP/badpw"
chmod 600 "$TEST_TMP/badpw"
RLOCK_PASSWORD=s3cret r --password-file "$TEST_TMP/badpw" release Q --owner o
expect_rc 77 "--password-file wins over RLOCK_PASSWORD"
check "file password not shown" no_secret
RLOCK_PASSWORD=s3cret r --password-file "$TEST_TMP/pw" release Q --owner o
expect_rc 0 "release Q"

# a failure after authenticating (unreachable db / busy) never shows the password
RLOCK_PASSWORD=s3cret r acquire Q2 --owner a
r -v -u "redis://:s3cret@$H" acquire Q2
expect_rc 75 "busy with a URL password"
check "busy message does not show the password" no_secret
p=$(free_port)
r -v -u "redis://:s3cret@127.0.0.1:$p" acquire Q2
expect_rc 69 "unreachable URL with a password"
check "unreachable message names the endpoint without the password" bash -c 'grep -qF "127.0.0.1:$2" <<<"$1" && ! grep -qF s3cret <<<"$1"' _ "$ERR" "$p"
r -u "redis://:s3cret@127.0.0.1:99999" acquire Q2
expect_rc 64 "bad port in a URL with a password"
check "usage message does not show the password" no_secret

# --- ACL users
rcli ACL SETUSER alice on '>alicepw' '~*' '&*' '+@all' >/dev/null
r -v -u "redis://alice:alicepw@$H" acquire AL --owner a
expect_rc 0 "ACL user alice via redis://alice:pw@"
check "alice's password never shown" no_secret
r -u "redis://alice:alicepw@$H" release AL --owner a
expect_rc 0 "alice releases"
r -u "redis://alice:wr0ngpw@$H" acquire AL
expect_rc 77 "alice with a wrong password: WRONGPASS"
check "user named, password not" bash -c '! grep -qF wr0ngpw <<<"$1"' _ "$ERR"
echo "  $ERR"
r -u "redis://nobody:x@$H" acquire AL
expect_rc 77 "unknown ACL user"
RLOCK_PASSWORD=alicepw r -u "redis://alice@$H" acquire AL2 --owner a
expect_rc 0 "user in the URL, password from RLOCK_PASSWORD"
RLOCK_PASSWORD=alicepw r -u "redis://alice@$H" release AL2 --owner a

# exactly the brief's user: ~* +@all (Redis 7 default: no pub/sub channels)
rcli ACL SETUSER alice2 on '>alicepw' '~*' '+@all' >/dev/null
r -u "redis://alice2:alicepw@$H" acquire AL3 --owner a
expect_rc 0 "ACL user '~* +@all' acquires"
r -u "redis://alice2:alicepw@$H" release AL3 --owner a
echo "  release by a user without channel permission: rc $RC: $ERR"
expect_rc 77 "release by a user who may not PUBLISH: ACL denial inside the script is 77"
check "a release that failed left the lock held (no half-done release)" test "$(rcli HGET AL3 a)" = 1

rcli ACL SETUSER bob on '>bobpw' '~*' '&*' '+@all' -evalsha >/dev/null
r -v -u "redis://bob:bobpw@$H" acquire BL
expect_rc 77 "user without EVALSHA: NOPERM"
check "bob's NOPERM names the endpoint, not the password" bash -c 'grep -qF "$2" <<<"$1" && ! grep -qF bobpw <<<"$1"' _ "$ERR" "$H"
check "bob: error line carries Redis's error" grep -qi 'noperm\|permission' <<<"$ERR"
echo "  $(grep -v '^rlock: [0-9:.]* [<>]' <<<"$ERR")"
check "bob wrote nothing" test "$(rcli EXISTS BL)" = 0

rcli ACL SETUSER carol on '>pw' '~*' '&*' '+@all' -hincrby >/dev/null
r -u "redis://carol:pw@$H" acquire CL --owner c
r -u "redis://carol:pw@$H" acquire CL --owner c
expect_rc 77 "ACL denial raised inside a script (HINCRBY on re-entry)"
rcli ACL SETUSER dave on '>pw' '~other:*' '&*' '+@all' >/dev/null
r -u "redis://dave:pw@$H" acquire DL
expect_rc 77 "ACL key pattern denial (user may only touch other:*)"
check "dave wrote nothing" test "$(rcli EXISTS DL)" = 0

finish
