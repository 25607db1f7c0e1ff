#!/usr/bin/env bash
# History is optional (issue 30): it never stops a lock or a release, and
# `history` says what is true when it could not be written.
#  - a bad RLOCK_HISTORY_MAXLEN / RLOCK_HISTORY_TTL is a warning and the default,
#    for every subcommand (release never exits 64 for it);
. "$(dirname "$0")/lib.sh"
start_redis

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

finish
