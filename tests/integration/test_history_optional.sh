#!/usr/bin/env bash
# History is optional (issue 30): it never stops a lock or a release, and
# `history` says what is true when it could not be written.
#  - a bad RLOCK_HISTORY_MAXLEN / RLOCK_HISTORY_TTL is a warning and the default,
#    for every subcommand (release never exits 64 for it);
#  - the guide's lock-only ACL user (docs/security.md) from before history (no key pattern for
#    rlock_log:, no xadd/xrevrange) locks in every mode, warned once per process
#    with the key and the ACL rule; doctor reports it;
#  - `history` says when the history key is no stream, or the user may not
#    write or read it (with the ACL it needs), instead of "never changed by rlock".
. "$(dirname "$0")/lib.sh"
start_redis
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PW=acl-Pw-30
H="127.0.0.1:$REDIS_PORT"
. "$(dirname "$0")/acl_helpers.sh"
check "$ACL_DOC has the ACL SETUSER line" test -n "$ACL_LINE"
setuser() { acl_setuser "$1" "$2"; } # USER SED: the guide's line, changed

# --- a bad setting: warned about, the default used; the lock is taken and released
r acquire o7 --owner t7
expect_rc 0 "acquire o7"
RLOCK_HISTORY_MAXLEN=x r release o7 --owner t7
expect_rc 0 "RLOCK_HISTORY_MAXLEN=x: release still releases"
check "... and the lock is free" key_gone o7
check "... saying why the setting is not used" \
  grep -qF 'rlock: warning: RLOCK_HISTORY_MAXLEN: "x" is not a whole number from 0 to 1000000; using 1000' <<<"$ERR"
check "... the release is in the history (the default, 1000 events)" \
  test "$(rcli XLEN 'rlock_log:{o7}')" = 2
for sub in "status" "status o7" "check --ttl-none" "history o7" "doctor"; do
  RLOCK_HISTORY_MAXLEN=-1 RLOCK_HISTORY_TTL=soon r $sub
  check "RLOCK_HISTORY_MAXLEN=-1 RLOCK_HISTORY_TTL=soon $sub: not a usage error (rc $RC)" test "$RC" != 64 -a "$RC" != 3
  check "... two warnings ($sub)" test "$(grep -c '^rlock: warning: RLOCK_HISTORY_' <<<"$ERR")" = 2
done
RLOCK_HISTORY_TTL=soon r run o7r -- true
expect_rc 0 "RLOCK_HISTORY_TTL=soon: run"
ttl=$(rcli PTTL 'rlock_log:{o7r}')
check "... the history lives the default 30 days ($ttl ms)" between "$ttl" 2591000000 2592000000
RLOCK_HISTORY_MAXLEN=x r -q release o7 --owner t7
check "-q silences the warning" test -z "$(grep warning <<<"$ERR")"

# --- the lock-only user from before history: no ~rlock_log:{lock:*, no xadd/xrevrange
check "the old lock-only user is accepted" \
  test "$(setuser old 's/ +xadd +xrevrange//; s/ ~rlock_log:{lock:\*//')" = OK
check "... and has no rlock_log: pattern" eval '! rcli ACL GETUSER old | grep -q rlock_log'
OLD="redis://old:$PW@$H"
ro() { r -u "$OLD" -q "$@"; }
r -u "$OLD" acquire lock:a --ttl 20s --owner tok-a
expect_rc 0 "acquire as the old user: locks without its history"
check "it warns once, naming the key and the ACL rule" eval \
  '[ "$(grep -c "history not written" <<<"$ERR")" = 1 ] && grep -qF "may not use the key \"rlock_log:{lock:a}\"" <<<"$ERR" && grep -qF "ACL SETUSER old ~rlock_log:{lock:a}" <<<"$ERR"'
check "the lock is held" test "$(rcli HGET lock:a tok-a)" = 1
ro renew lock:a --owner tok-a
expect_rc 0 "renew as the old user"
ro release lock:a --owner tok-a
expect_rc 0 "release as the old user"
check "... released" key_gone lock:a
for mode in "" --fair -s --write --limit=2; do
  r -u "$OLD" run $mode --ttl 900ms lock:r${mode//[-=]/} -- sleep 1.2
  expect_rc 0 "run ${mode:-(plain)} as the old user, with a renewal"
  check "... one warning for the whole run" test "$(grep -c 'history not written' <<<"$ERR")" = 1
done
ro run lock:m1 lock:m2 -- true
expect_rc 0 "run over two names as the old user"
ro acquire lock:f
ro force-unlock lock:f
expect_rc 0 "force-unlock as the old user"
ro run --once-per 1d lock:once -- true
expect_rc 0 "run --once-per as the old user"
check "no history key was written for any of them" test -z "$(rcli --scan --pattern 'rlock_log:{lock:*')"
RLOCK_HISTORY_MAXLEN=0 r -u "$OLD" acquire lock:z --owner z
check "RLOCK_HISTORY_MAXLEN=0: no warning (nothing to write)" eval '! grep -q "history not written" <<<"$ERR"'
ro release lock:z --owner z
# doctor names it while such a lock is held
ro acquire lock:held --ttl 30s
r -u "$OLD" doctor
check "doctor: a history finding, a warning naming the key and the ACL rule" eval \
  'grep -qE "^warning .* history: 1 of 1 rlock lock held now: their history is not written: rlock_log:\{lock:held\} \(no permission\)" <<<"$OUT" && grep -qF "ACL SETUSER old ~rlock_log:{lock:held}" <<<"$OUT"'
r -u "$OLD" --json doctor
check "doctor --json: the history finding" eval \
  '"$PY" -c "import json,sys; d=json.loads(sys.argv[1]); f=[x for x in d[\"findings\"] if x[\"check\"]==\"history\"]; assert f and f[0][\"verdict\"]==\"warning\", f" "$OUT"'
r doctor
check "doctor as a user that may write it: ok" grep -qE '^ok .* history: 1 rlock lock held now: this user may write their history' <<<"$OUT"

# --- history says what is true
r -u "$OLD" history lock:held
expect_rc 77 "history as a user that may not read the history key: 77"
check "... saying so, with the ACL rule" \
  grep -qF 'this Redis user may not read the history key "rlock_log:{lock:held}"; to read it: ACL SETUSER old ~rlock_log:{lock:held} +xrevrange' <<<"$ERR"
check "... not 'never changed by rlock'" eval '! grep -q "never changed" <<<"$OUT$ERR"'
check "a user without xadd (the key pattern, xrevrange) is accepted" \
  test "$(setuser noxadd 's/ +xadd//')" = OK
NX="redis://noxadd:$PW@$H"
r -u "$NX" run lock:nx -- true
expect_rc 0 "run as a user without xadd"
r -u "$NX" history lock:nx
expect_rc 0 "history as that user"
check "it says the user may not write the history, with the ACL" \
  grep -qF '"lock:nx": this Redis user may not write the history key "rlock_log:{lock:nx}" (XADD): its changes are not logged; to log them: ACL SETUSER noxadd ~rlock_log:{lock:nx} +xadd' <<<"$OUT"
check "... not 'never changed by rlock'" eval '! grep -q "never changed" <<<"$OUT"'
r -u "$NX" --json history lock:nx
check "--json: log.access" test "$(jget "$OUT" log.access)" = "no write permission"
rcli SET 'rlock_log:{h3}' notastream >/dev/null
r acquire h3 --owner t3
expect_rc 0 "a history key of another type does not stop the lock"
r history h3
expect_rc 0 "history h3"
check "it says the key is no stream" \
  grep -qF '"h3": no history can be written: "rlock_log:{h3}" is a string, not a stream' <<<"$OUT"
check "... not 'never changed by rlock'" eval '! grep -q "never changed" <<<"$OUT"'
r --json history h3
check "--json: log.type string, access 'not a stream'" \
  test "$(jget "$OUT" log.type)/$(jget "$OUT" log.access)" = "string/not a stream"
r history never-used
check "a lock never changed still says so" grep -q 'no history (never changed by rlock' <<<"$OUT"

finish
