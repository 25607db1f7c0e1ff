#!/usr/bin/env bash
# rlock check: a Monitoring Plugins-style check. Every threshold and every
# exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (Redis unreachable, usage
# errors); --held-longer, --dead-holder (the verdict of force-unlock --if-dead),
# --waiters (a fair queue), --ttl-none, --done-within after a real
# run --once-per (also once the job's window has ended); --match; one line
# with perfdata whatever the names hold (quotes, backslashes, newlines, '|',
# 4 KB); -E does not apply; a Redlock (several -u) and a Cluster.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_redis

# set_meta NAME FIELD JSON [PORT]: rewrites one field of NAME's holder record.
set_meta() {
  local raw cli=(rcli)
  [ -n "${4:-}" ] && cli=(redis-cli -h 127.0.0.1 -p "$4")
  raw=$("${cli[@]}" HGET "$1" rlock:meta)
  raw=$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=json.loads(sys.argv[3]); print(json.dumps(d))' \
    "$raw" "$2" "$3")
  "${cli[@]}" HSET "$1" rlock:meta "$raw" >/dev/null
}
# held_since NAME MS_AGO [PORT]: the record says it was taken MS_AGO ago (server clock).
held_since() { set_meta "$1" acquired_at_ms "$(( $(server_ms) - $2 ))" "${3:-}"; }
one_line() { [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 1 ]; }
starts() { [[ $OUT == "$1"* ]]; }
has() { grep -qF -- "$1" <<<"$OUT"; }
pipes() { local only=${OUT//[^|]/}; echo ${#only}; }
H=3600000

# --- a free lock, a fresh one: OK
r check job
expect_rc 0 "check of a free lock"
check "RLOCK OK - \"job\": free | perfdata ($OUT)" starts 'RLOCK OK - "job": free | '
check "perfdata: held 0s, ttl 0s, waiters 0, renewed_age U" \
  has "'job held'=0s;;;0; 'job ttl'=0s;;;0; 'job waiters'=0;;;0; 'job renewed_age'=U;;;0;"
check "nothing on stderr" test -z "$ERR"
r acquire job --ttl 60s
OWNER=$OUT
r check job --held-longer 1h,2h
expect_rc 0 "held for a moment, --held-longer 1h,2h"
check "OK says held and perfdata carries the thresholds" has "'job held'="
check "thresholds in seconds: ;3600;7200;0;" grep -qE "'job held'=[0-9.]+s;3600;7200;0;" <<<"$OUT"
check "ttl in perfdata (60s lease)" grep -qE "'job ttl'=(59|60)(\.[0-9]+)?s;;;0;" <<<"$OUT"

# --- --held-longer: WARNING over WARN, CRITICAL over CRIT
held_since job $(( 90 * 60000 ))
r check job --held-longer 1h,2h
expect_rc 1 "held 90m, --held-longer 1h,2h: WARNING"
check "RLOCK WARNING - \"job\": held 1h30m (over 1h) ($OUT)" starts 'RLOCK WARNING - "job": held 1h30m (over 1h) |'
held_since job $(( 3 * H ))
r check job --held-longer 1h,2h
expect_rc 2 "held 3h: CRITICAL"
check "RLOCK CRITICAL - \"job\": held 3h (over 2h)" starts 'RLOCK CRITICAL - "job": held 3h (over 2h) |'
check "perfdata held=10800s" grep -qE "'job held'=1080[0-9](\.[0-9]+)?s;3600;7200;0;" <<<"$OUT"
r -E 9 check job --held-longer 1h,2h
expect_rc 2 "-E 9 does not change check's exit status"

# --- --ttl-none
r check job --ttl-none
expect_rc 0 "--ttl-none with a lease"
rcli PERSIST job >/dev/null
r check job --ttl-none
expect_rc 2 "--ttl-none on a lock without expiry: CRITICAL"
check "says held without an expiry" has '"job": held without an expiry'
check "ttl perfdata U" has "'job ttl'=U;;;0;"
r check job
expect_rc 0 "without --ttl-none the same lock is OK"
# Another tool's lock (SET NX without PX): rlock cannot tell since when it is held.
rcli SET foreign x >/dev/null
r check foreign --ttl-none
expect_rc 2 "a foreign key without expiry, --ttl-none: CRITICAL"
r check foreign --held-longer 1h,2h
expect_rc 3 "--held-longer on a lock without rlock's record: UNKNOWN"
check "says held since an unknown time" starts 'RLOCK UNKNOWN - "foreign": held since an unknown time'
r acquire fresh --ttl 60s
r check foreign fresh --held-longer 1h,2h
expect_rc 3 "... and a fresh lock beside it does not hide that (UNKNOWN over OK)"
held_since fresh $(( 3 * H ))
r check foreign fresh --held-longer 1h,2h
expect_rc 2 "... but a CRITICAL one beside it wins (CRITICAL over UNKNOWN)"
rcli DEL foreign >/dev/null
# A Redisson lock held without an expiry, no rlock record (issue 30): the
# listing finds what the named check finds; a counter hash without one is no lock.
rcli HSET tn2 5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:1 1 >/dev/null
rcli HSET tn2w mode write 5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:7:write 1 >/dev/null
rcli HSET counter apples 3 >/dev/null
r check tn2 --ttl-none
expect_rc 2 "named: a Redisson-shaped hash without expiry is CRITICAL"
r check --ttl-none
expect_rc 2 "listed (no names): the same lock is CRITICAL, not 'no locks found'"
check "... names tn2 and tn2w (a Redisson writer)" eval 'grep -q "\"tn2\": held without an expiry" <<<"$OUT" && grep -q "\"tn2w\": held without an expiry" <<<"$OUT"'
check "... not the counter hash" eval '! grep -q counter <<<"$OUT"'
r status
check "status lists it too" grep -q '^tn2 ' <<<"$OUT"
rcli DEL tn2 tn2w counter >/dev/null
# A semaphore's key never expires by design: each permit has its own lease.
r acquire --limit 2 sem --ttl 60s
r check sem --ttl-none
expect_rc 0 "--ttl-none on a --limit semaphore (permits with leases): OK"
check "its ttl is the permit's lease" grep -qE "'sem ttl'=(59|60)(\.[0-9]+)?s;;;0;" <<<"$OUT"
r release job --owner "$OWNER"

# --- --waiters: a fair queue of two
r acquire q --fair --ttl 60s
QOWNER=$OUT
bg "$TEST_TMP/w1" acquire q --fair -w 30s
bg "$TEST_TMP/w2" acquire q --fair -w 30s
queued() { [ "$(rcli ZCARD 'redisson_lock_timeout:{q}')" = 2 ]; }
check "two fair waiters queue" wait_until 10 queued
r check q --waiters 2,5
expect_rc 0 "2 waiters, --waiters 2,5: OK (more than 2 warns)"
check "perfdata waiters=2;2;5;0;" has "'q waiters'=2;2;5;0;"
r check q --waiters 1,5
expect_rc 1 "2 waiters, --waiters 1,5: WARNING"
check "says 2 waiters (over 1)" has '"q": 2 waiters (over 1)'
r check q --waiters 0,1
expect_rc 2 "2 waiters, --waiters 0,1: CRITICAL"
kill "$(cat "$TEST_TMP/w1.pid")" "$(cat "$TEST_TMP/w2.pid")" 2>/dev/null
r release q --owner "$QOWNER"
check "waiters gone" wait_until 10 bg_done "$TEST_TMP/w2"
r force-unlock q

# --- --dead-holder: the verdict force-unlock --if-dead acts on
sh -c '"$1" acquire dead --ttl 60s >/dev/null' sh "$RLOCK"
r check dead --dead-holder
expect_rc 2 "--dead-holder: the shell that took it has exited: CRITICAL"
check "says the holder is gone and what --if-dead would do ($OUT)" \
  grep -qE '^RLOCK CRITICAL - "dead": holder is gone: pid [0-9]+ is gone \(force-unlock --if-dead would remove it\) \|' <<<"$OUT"
bg "$TEST_TMP/alive" run alive --ttl 60s -- sleep 30
check "a live run holds 'alive'" wait_until 10 key_there alive
r check alive --dead-holder
expect_rc 0 "--dead-holder with a live holder: OK"
r check dead alive --dead-holder
expect_rc 2 "two names, one dead: CRITICAL"
check "names the dead one and counts both" grep -qE '^RLOCK CRITICAL - "dead": holder is gone: .* \(2 locks checked, 2 held\) \|' <<<"$OUT"
r force-unlock dead --if-dead
expect_rc 0 "force-unlock --if-dead agrees: it removes 'dead'"
kill "$(cat "$TEST_TMP/alive.pid")" 2>/dev/null

# --- --done-within with a real run --once-per
r check nightly --done-within 1h
expect_rc 2 "--done-within, no completion recorded: CRITICAL"
check "says no completion recorded" has '"nightly": no completion recorded (--done-within 1h)'
r run --once-per 2s nightly -- true
expect_rc 0 "run --once-per 2s nightly -- true"
r check nightly --done-within 1h
expect_rc 0 "just done, --done-within 1h: OK"
check "perfdata done_age with crit 3600" grep -qE "'nightly done_age'=[0-9.]+s;;3600;0;" <<<"$OUT"
w_end=$(rcli GET 'rlock_done:{nightly}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["window_end_ms"])')
check "the server's clock passes the job's 2s window end" wait_until 8 eval '[ $(server_ms) -ge $w_end ]'
# The named defect: the record expired at its window's end, so a nightly job
# checked the next morning (before it ran again) was "never done".
r check nightly --done-within 1h
expect_rc 0 "after the window ended, the completion is still known (done-within 1h: OK)"
done_at=$(rcli GET 'rlock_done:{nightly}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["done_at_ms"])')
check "the server's clock passes 1s after the completion" wait_until 5 eval '[ $(server_ms) -gt $(( done_at + 1000 )) ]'
r check nightly --done-within 1s
expect_rc 2 "done over 1s ago, --done-within 1s: CRITICAL"
check "says last done ... ago (over 1s)" grep -qE '^RLOCK CRITICAL - "nightly": last done [0-9.]+(ms|s) ago \(over 1s\) \|' <<<"$OUT"
r run --once-per 2s nightly -- true
expect_rc 0 "a run in the next window still runs (the old record does not count as done)"
check "it recorded a new completion" test "$(rcli GET 'rlock_done:{nightly}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["window_end_ms"])')" -gt "$w_end"

# --- --match checks every lock it lists
for n in m:a m:b other; do r acquire "$n" --ttl 60s; done
held_since m:a $(( 3 * H ))
held_since other $(( 3 * H ))
r check --match 'm:*' --held-longer 1h,2h
expect_rc 2 "--match 'm:*': m:a held 3h: CRITICAL"
check "names m:a, counts 2 checked" starts 'RLOCK CRITICAL - "m:a": held 3h (over 2h) (2 locks checked, 2 held) |'
check "perfdata of m:b, none of 'other'" eval 'has "'"'"'m:b held'"'"'" && ! has other'
r check --match 'nothing*' --held-longer 1h,2h
expect_rc 0 "--match with no lock: OK"
check "says no locks found" starts 'RLOCK OK - no locks found |'

# --- hostile names: one line, one '|', escaped
NASTY=$'q\'uo"te\\back|bar=eq\nnl'
r acquire "$NASTY" --ttl 60s
rcli PERSIST "$NASTY" >/dev/null
r check "$NASTY" --ttl-none
expect_rc 2 "hostile name without expiry: CRITICAL"
check "one line ($OUT)" one_line
check "exactly one '|' ($(pipes))" test "$(pipes)" = 1
check "the name escaped in the text" starts 'RLOCK CRITICAL - "q'"'"'uo\"te\\back\x7cbar=eq\nnl": held without an expiry (it never frees itself) |'
check "the label: quote doubled, = and | escaped" has "'q''uo\\\"te\\\\back\\x7cbar\\x3deq\\nnl ttl'=U;;;0;"
# rlock refuses names over 1024 bytes; another client may still make one (a
# Redisson-shaped hash), which --match lists.
BIG=$(printf 'k%.0s' $(seq 1 4096))
rcli HSET "$BIG" "tok:1" 1 >/dev/null; rcli PEXPIRE "$BIG" 60000 >/dev/null
r check --match 'kkk*' --ttl-none
expect_rc 0 "a 4 KB name (another client's lock, listed by --match)"
check "one line, cut to 200 bytes" eval 'one_line && has "$(printf "k%.0s" $(seq 1 200))..." && ! has "$(printf "k%.0s" $(seq 1 201))"'
check "line under 2 KB (${#OUT})" test "${#OUT}" -lt 2000

# --- UNKNOWN (3): Redis unreachable, usage errors
DEAD_URL="redis://127.0.0.1:$(free_port)"
r -u "$DEAD_URL" check job --held-longer 1h,2h
expect_rc 3 "Redis unreachable: UNKNOWN"
check "RLOCK UNKNOWN - check \"job\" on ...: why ($OUT)" starts "RLOCK UNKNOWN - check \"job\" on $DEAD_URL: "
check "one line on stdout, nothing on stderr" eval 'one_line && test -z "$ERR"'
r -u "$DEAD_URL" check --match 'm:*'
expect_rc 3 "Redis unreachable with --match: UNKNOWN"
r -u "$DEAD_URL" check "$NASTY"
expect_rc 3 "Redis unreachable, a hostile name: UNKNOWN"
check "still one line, one '|' at most ($OUT)" eval 'one_line && test "$(pipes)" = 0'
check "the name escaped in it" starts 'RLOCK UNKNOWN - check "q'"'"'uo\"te\\back\x7cbar=eq\nnl" on '

for bad in "--held-longer 2h,1h" "--held-longer 1h" "--held-longer x,y" "--waiters 1" "--waiters -1,2" "--bogus" \
           "--done-within 1h --match m:*" "--done-within nope"; do
  # shellcheck disable=SC2086
  r check job $bad
  expect_rc 3 "usage error check job $bad: UNKNOWN"
  check "  RLOCK UNKNOWN - on one line ($OUT)" eval 'starts "RLOCK UNKNOWN - " && one_line'
done
r --json check job
expect_rc 3 "check --json: usage, UNKNOWN"
r check --help
expect_rc 0 "check --help is help (exit 0), not a check"
check "help names --done-within and the plugin's exit codes" eval 'has --done-within && has "3 UNKNOWN"'

# --- Redlock: several -u (3 masters)
start_masters 3
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" acquire rl --ttl 60s
expect_rc 0 "Redlock acquire"
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" check rl --held-longer 1h,2h --ttl-none
expect_rc 0 "Redlock check: held by the majority, fresh: OK"
check "Redlock OK line" starts 'RLOCK OK - "rl": held '
for i in 0 1 2; do held_since rl $(( 3 * H )) "${MASTER_PORTS[$i]}"; done
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" check rl --held-longer 1h,2h
expect_rc 2 "Redlock: held 3h on every master: CRITICAL"
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" check rl --dead-holder
expect_rc 3 "Redlock --dead-holder is a usage error: UNKNOWN"
stop_master 1; stop_master 2
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" check rl --held-longer 1h,2h
expect_rc 3 "Redlock with 2 of 3 masters down: UNKNOWN"

# --- Cluster: names routed by slot, --match over every primary
start_cluster
r -u "$CLUSTER_URL" acquire c1 --ttl 60s
r -u "$CLUSTER_URL" acquire c2 --ttl 60s
P=$(node_of_name c1)
held_since c1 $(( 3 * H )) "$P"
r -u "$CLUSTER_URL" check c1 c2 --held-longer 1h,2h
expect_rc 2 "Cluster: c1 held 3h: CRITICAL"
check "names c1, 2 checked" starts 'RLOCK CRITICAL - "c1": held 3h (over 2h) (2 locks checked, 2 held) |'
r -u "$CLUSTER_URL" check --match 'c*' --held-longer 4h,5h
expect_rc 0 "Cluster --match: both listed, OK"
check "2 locks checked" starts 'RLOCK OK - 2 locks checked, 2 held |'
finish
