#!/usr/bin/env bash
# run --once-per DUR: the job runs once per window of the server's clock, on
# whichever host gets there first; the second run in the window exits 0 and
# prints nothing (cron mails every output), and says who did it with -v; a failed run records nothing; concurrent runs queue and only one
# runs the job; a 2s window runs again after the server's clock crosses its
# boundary; status --json shows the last completion; unreadable records; a
# lost lock records nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis
HOST=$(python3 -c 'import socket; print(socket.gethostname())')
record_field() { rcli GET "rlock_done:{$1}" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
runs() { [ -e "$1" ] && wc -l <"$1" | tr -d ' ' || echo 0; }

# --- two runs in a row: the job runs once; the second names who did it
J=$TEST_TMP/nightly.ran
r run --once-per 1d nightly -- sh -c 'echo ran >>"$1"' sh "$J"
expect_rc 0 "first --once-per 1d run"
check "the job ran once ($(runs "$J"))" test "$(runs "$J")" = 1
check "the lock is released" key_gone nightly
now=$(server_ms); ttl=$(rcli PTTL 'rlock_done:{nightly}')
day_end=$(( (now / 86400000 + 1) * 86400000 + 30 * 86400000 ))
check "the record expires 30 days after the end of the server's UTC day (PTTL $ttl, $(( day_end - now ))ms to go)" \
  between "$ttl" $(( day_end - now - 2000 )) $(( day_end - now ))
pid=$(record_field nightly pid)
r run --once-per 1d nightly -- sh -c 'echo ran >>"$1"' sh "$J"
expect_rc 0 "second --once-per 1d run in the same day"
check "the job did not run again ($(runs "$J"))" test "$(runs "$J")" = 1
check "a skip is quiet success: nothing on stdout or stderr (cron mails any output; got '$OUT$ERR')" \
  test -z "$OUT$ERR"
r -v run --once-per 1d nightly -- sh -c 'echo ran >>"$1"' sh "$J"
expect_rc 0 "a third --once-per 1d run in the same day, with -v"
check "the job did not run again ($(runs "$J"))" test "$(runs "$J")" = 1
check "-v: stderr says it was already done, by host $HOST pid $pid" \
  grep -qF "nightly: already done in this window (1d from " <<<"$ERR"
check "stderr names host and pid" grep -qF "by host $HOST pid $pid (\"sh *** ***" <<<"$ERR"
check "stderr says exit 0 and not running" grep -q 'exit 0; not running$' <<<"$ERR"
check "the lock is released after the check" key_gone nightly
r -q run --once-per 1d nightly -- sh -c 'echo ran >>"$1"' sh "$J"
check "-q: nothing on stderr, rc 0, not run" test "$RC/$ERR/$(runs "$J")" = "0//1"

# --- status NAME shows the last completion
r status nightly --json
check "status --json is JSON" is_json "$OUT"
check "last_done: host, pid, cmd, exit, a 1d window holding 'at'" python3 - "$OUT" "$HOST" "$pid" <<'PY'
import json, sys, datetime
doc = json.loads(sys.argv[1])["locks"][0]["last_done"]
ok = doc["host"] == sys.argv[2] and doc["pid"] == int(sys.argv[3]) and doc["exit"] == 0
ok = ok and doc["cmd"].startswith("sh *** ***") and doc["readable"] is True
ok = ok and doc["window_end_ms"] - doc["window_start_ms"] == 86400000 and doc["window_start_ms"] % 86400000 == 0
ok = ok and doc["window_start_ms"] <= doc["at_ms"] < doc["window_end_ms"]
ok = ok and doc["window_start"].endswith("T00:00:00Z") and doc["at"].endswith("Z")
sys.exit(0 if ok else 1)
PY
r status nightly
check "status NAME prints a 'last done' line" grep -q "^  last done: by host $HOST pid $pid " <<<"$OUT"
r status free-name --json
check "no record: last_done is null" test "$(jget "$OUT" locks.0.last_done)" = null

# --- a failing first run records nothing: the next one runs
F=$TEST_TMP/fails.ran
r run --once-per 1d fails -- sh -c 'echo ran >>"$1"; exit 3' sh "$F"
expect_rc 3 "a failing --once-per run exits with CMD's status"
check "no record after a failure" key_gone 'rlock_done:{fails}'
r run --once-per 1d fails -- sh -c 'echo ran >>"$1"' sh "$F"
expect_rc 0 "the next run after a failure"
check "it ran again (2 runs: $(runs "$F"))" test "$(runs "$F")" = 2

# --- two concurrent runs of a 1s job with -w: exactly one runs it, both exit 0
C=$TEST_TMP/conc.ran
bg "$TEST_TMP/c1" -v run --once-per 1d -w 10s conc -- sh -c 'echo ran >>"$1"; sleep 1' sh "$C"
bg "$TEST_TMP/c2" -v run --once-per 1d -w 10s conc -- sh -c 'echo ran >>"$1"; sleep 1' sh "$C"
check "both concurrent runs end" wait_until 8 eval 'bg_done "$TEST_TMP/c1" && bg_done "$TEST_TMP/c2"'
check "both exit 0 ($(bg_rc "$TEST_TMP/c1"), $(bg_rc "$TEST_TMP/c2"))" \
  test "$(bg_rc "$TEST_TMP/c1")/$(bg_rc "$TEST_TMP/c2")" = 0/0
check "the job ran exactly once ($(runs "$C"))" test "$(runs "$C")" = 1
check "one of them said it was already done" \
  eval 'cat "$TEST_TMP/c1.err" "$TEST_TMP/c2.err" | grep -c "already done in this window" | grep -qx 1'

# --- a 6s window: done within it, runs again once the server's clock has crossed
# its end. The two runs in one window start in its first half (3s for two runs,
# on a loaded machine too); the second is judged only if the server's clock was
# still inside the window after it ended.
W=$TEST_TMP/six.ran
check "the server's clock reaches the first half of a 6s window" wait_until 8 eval '[ $(( $(server_ms) % 6000 )) -lt 3000 ]'
r run --once-per 6s six -- sh -c 'echo ran >>"$1"' sh "$W"
expect_rc 0 "--once-per 6s, first run"
w_end=$(record_field six window_end_ms)
check "the record's window ends on a 6s boundary" test $(( w_end % 6000 )) = 0
r run --once-per 6s six -- sh -c 'echo ran >>"$1"' sh "$W"
after=$(server_ms)
check "in the same 6s window: not run again (rc $RC, runs $(runs "$W"); ended $(( w_end - after ))ms before the window's end)" \
  test "$after" -lt "$w_end" -a "$RC/$(runs "$W")" = 0/1
check "the server's clock passes the window's end" wait_until 8 eval '[ $(server_ms) -ge $w_end ]'
r run --once-per 6s six -- sh -c 'echo ran >>"$1"' sh "$W"
expect_rc 0 "--once-per 6s after the boundary"
check "it ran again in the next window ($(runs "$W") runs)" test "$(runs "$W")" = 2

# --- records that cannot be read
rcli SET 'rlock_done:{junk}' 'not json' PX 60000 >/dev/null
r run --once-per 1d junk -- touch "$TEST_TMP/junk.ran"
check "an unreadable record with an expiry counts as done (rc $RC)" test "$RC" = 0 -a ! -e "$TEST_TMP/junk.ran"
check "with a warning naming the record" grep -qF 'rlock: warning: junk: its once-per record ("rlock_done:{junk}") cannot be read' <<<"$ERR"
rcli SET 'rlock_done:{junk2}' '{"done_at_ms":"x"}' >/dev/null
r run --once-per 1d junk2 -- touch "$TEST_TMP/junk2.ran"
check "a key without an expiry is not a record: the job runs (rc $RC)" test "$RC" = 0 -a -e "$TEST_TMP/junk2.ran"
check "... and its completion replaces it" test "$(record_field junk2 exit)" = 0
rcli HSET 'rlock_done:{junk3}' a b >/dev/null
r run --once-per 1d junk3 -- true
check "a record key of another type without expiry: runs and is replaced (rc $RC)" \
  test "$RC/$(rcli TYPE 'rlock_done:{junk3}')" = 0/string

# --- a lock lost before CMD ends: nothing recorded
r run --once-per 1d --on-lost ignore lost -- "$RLOCK" force-unlock lost
expect_rc 0 "CMD removed its own lock and exited 0"
check "no record written without the lock" key_gone 'rlock_done:{lost}'
check "a warning says it was not recorded" grep -q 'completion not recorded for --once-per' <<<"$ERR"

# --- the script itself: written by the holder only, the same answer when resent
done_eval() { redis-cli -p "$REDIS_PORT" --eval "$RLOCK_LUA/once_done.lua" S 'rlock_done:{S}' , "$1" 86400000 h1 42 job 0 v "$2"; }
r acquire S --owner tok-s --ttl 20s
first=$(done_eval tok-s op1 | tr '\n' ' ')
check "the holder records: 1, window start, end, done at ($first)" grep -qE '^1 [0-9]+ [0-9]+ [0-9]+ $' <<<"$first"
sleep 0.02
again=$(done_eval tok-s op1 | tr '\n' ' ')
check "a resend (same op id) answers the same, unchanged ($again)" test "$again" = "$first"
check "... and left the record as it was" test "$(record_field S op)/$(record_field S host)" = op1/h1
other=$(done_eval intruder op2 | tr '\n' ' ')
check "another owner records nothing ($other)" test "$other" = "-2 tok-s "
check "... the record is unchanged" test "$(record_field S op)" = op1
r release S --owner tok-s
gone=$(done_eval tok-s op3 | tr '\n' ' ')
check "after the release nothing is recorded ($gone)" test "$gone" = "-1 "
check "... the record is still the holder's" test "$(record_field S op)" = op1

# --- refused combinations: 64, one line
for args in "--once-per 0" "--once-per -1s" "--once-per soon" "--once-per 1d -s" "--once-per 1d --limit 2"; do
  r run $args X -- true
  check "run $args: usage error 64, one line (rc $RC)" eval 'test "$RC" = 64 && one_err_line'
done
r run --once-per 1d A B -- true
check "--once-per with two names: 64 (rc $RC)" eval 'test "$RC" = 64 && one_err_line'
finish
