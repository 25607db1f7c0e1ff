#!/usr/bin/env bash
# `rlock history NAME` (issue 23): every state change appends one event to the
# capped stream rlock_log:{NAME}, in the script that makes it (or, for what only
# the client knows, sent once after): acquired, re-entered, released,
# renewed-late, lost, force-unlocked (plain and --if-dead), once-done, skipped;
# --limit, --json's schema, --utc; a lock made by Redisson is said to be one; a
# script sent twice (lost reply) logs once; hostile stream entries are shown as
# malformed or escaped, never crash; the keys share NAME's slot (CLUSTER KEYSLOT
# on a real cluster node); a Redlock's history is the majority's view;
# RLOCK_HISTORY_MAXLEN=0 writes none; the stream expires (RLOCK_HISTORY_TTL).
. "$(dirname "$0")/lib.sh"
start_redis
ev_kinds() { # NAME: the kinds of the stream's events, oldest first, space-separated
  rcli XRANGE "rlock_log:{$1}" - + | awk 'prev == "kind" { printf "%s ", $0 } { prev = $0 }'
}
kinds_of() { # text output -> the kinds of its event lines (after the time and two spaces)
  awk -F'  ' '/^[0-9]/ { split($2, w, " "); print w[1] }' <<<"$OUT" | tr '\n' ' '
}
xlen() { rcli XLEN "$1"; }

# --- acquired, re-entered, released, renewed-late; text output
r acquire h1 --owner tok-1
expect_rc 0 "acquire"
r acquire h1 --owner tok-1
expect_rc 0 "re-enter"
rcli PEXPIRE h1 2000 >/dev/null # a renewal that finds under a third of the lease left is late
r renew h1 --owner tok-1 --ttl 30s
expect_rc 0 "renew (late)"
r renew h1 --owner tok-1 --ttl 30s
expect_rc 0 "renew (on time)"
r release h1 --owner tok-1
r release h1 --owner tok-1
expect_rc 0 "release twice"
check "events: acquired re-entered renewed-late released released (got: $(ev_kinds h1))" \
  test "$(ev_kinds h1)" = "acquired re-entered renewed-late released released "
r history h1
expect_rc 0 "history"
check "one line per event, oldest first" test "$(kinds_of)" = "acquired re-entered renewed-late released released "
check "acquired names the mode, fence, waited ms, host, pid, version" \
  grep -Eq 'acquired owner=tok-1 host=[^ ]+ pid=[0-9]+ cmd=.* ver=[0-9.]+ mode=exclusive waited_ms=[0-9]+ fence=[0-9]+ lease_ms=30000' <<<"$OUT"
check "released says how long it was held and the levels left" grep -Eq 'released .*held_ms=[0-9]+ left=0' <<<"$OUT"
check "renewed-late says what was left" grep -Eq 'renewed-late .*left_ms=[0-9]+ lease_ms=30000' <<<"$OUT"
check "local time with its offset" grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{3} [+-][0-9]{4}  acquired' <<<"$OUT"
r history h1 --utc
check "--utc: ISO time in UTC" grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z  acquired' <<<"$OUT"
check "TZ does not move --utc" test "$(TZ=Asia/Tokyo "$RLOCK" history h1 --utc)" = "$OUT"
r history h1 --limit 2
check "--limit 2: the newest two (got: $(kinds_of))" test "$(kinds_of)" = "released released "
r history h1 --limit 0
expect_rc 64 "--limit 0 is a usage error"
r history h1 --limit x
expect_rc 64 "--limit x is a usage error"
ttl=$(rcli PTTL 'rlock_log:{h1}')
check "the stream expires in 30 days by default ($ttl ms)" between "$ttl" 2591000000 2592000000

# --- --json: one document with a schema
r --json history h1 --limit 3
expect_rc 0 "history --json"
check "--json is one JSON document" is_json "$OUT"
check "schema 1" test "$(jget "$OUT" schema)" = 1
check "events oldest first, with kind, time, fields" \
  "$PY" -c 'import json,sys
d = json.loads(sys.argv[1]); e = d["events"]
assert [x["kind"] for x in e] == ["renewed-late", "released", "released"], e
assert all(x["time"].endswith("Z") and x["at_ms"] > 0 and x["fields"]["owner"] == "tok-1" for x in e)
assert d["name"] == "h1" and d["made_by_redisson"] is False' "$OUT"

# --- force-unlocked (by whom), and --if-dead (the verdict)
r acquire h2 --owner tok-2
r force-unlock h2
expect_rc 0 "force-unlock"
r history h2
check "force-unlocked names the holder and who removed it (got: $(kinds_of))" \
  grep -Eq "force-unlocked owner=tok-2 held_ms=[0-9]+ by_host=[^ ]+ by_pid=[0-9]+ by_cmd=.*by_ver=" <<<"$OUT"
check "force-unlocked: no bare host/pid/cmd, which would read as the removed holder's" \
  eval '! grep "force-unlocked" <<<"$OUT" | grep -Eq " (host|pid|cmd)="'
bash -c '"$1" acquire h3 --owner tok-3 >/dev/null' _ "$RLOCK" # its record names that bash, gone at once
r force-unlock h3 --if-dead
expect_rc 0 "force-unlock --if-dead of a gone holder"
r history h3
check "--if-dead's verdict is in the event" grep -Eq 'force-unlocked owner=tok-3 .*if_dead=' <<<"$OUT"

# --- once-done (exit code) and skipped (done in window)
r run h4 --once-per 1h -- true
expect_rc 0 "run --once-per"
r run h4 --once-per 1h -- true
expect_rc 0 "run --once-per again: skipped"
r history h4
check "acquired once-done released acquired released skipped (got: $(kinds_of))" \
  test "$(kinds_of)" = "acquired once-done released acquired released skipped "
check "once-done has the exit code" grep -Eq 'once-done owner=[^ ]+ .*exit=0' <<<"$OUT"
check "skipped says why" grep -Eq 'skipped .*why="done in window"' <<<"$OUT"
check "run's events name its command" grep -Eq 'acquired .*cmd=true ' <<<"$OUT"

# --- skipped: --if-unavailable skip (Redis down: best effort, nothing to write to) is quiet
r -u redis://127.0.0.1:1 --connect-timeout 200ms run h4 --if-unavailable skip -- true
expect_rc 0 "--if-unavailable skip with Redis down still exits 0"
r --sync-replicas 1/100ms run h4b --if-unavailable skip -- true
expect_rc 0 "--if-unavailable skip (too few replicas: unavailable, but Redis answers)"
r history h4b
check "skipped, why=unavailable (got: $(kinds_of))" grep -Eq 'skipped .*why=unavailable' <<<"$OUT"

# --- lost: the lock deleted behind a run
bg "$TEST_TMP/lost" run h5 --ttl 1500ms -- sleep 20
check "run h5 holds it" wait_until 10 key_there h5
rcli DEL h5 >/dev/null
check "the run ends once its renewal finds the lock gone" wait_until 20 bg_done "$TEST_TMP/lost"
r history h5
# (its renewal wrote the hold's ending, gone: the run adds no second one, issue 41;
# lost with its why: test_history_endings)
check "gone, its one ending (got: $(kinds_of))" eval 'grep -Eq "gone owner=" <<<"$OUT" && ! grep -Eq " lost owner=" <<<"$OUT"'

# --- fair mode: the same events
r acquire h6 --fair --owner tok-6
r release h6 --fair --owner tok-6
r history h6
check "fair: acquired (mode fair) and released" \
  test "$(kinds_of)" = "acquired released " -a -n "$(grep 'mode=fair' <<<"$OUT")"

# --- every mode: read, write, limit (their own scripts log through the same applied())
for mode in -s --write --limit=2; do
  name=hm${mode//[-=]/}
  r run "$name" $mode -- true
  expect_rc 0 "run $mode"
  r history "$name"
  check "run $mode: acquired and released (got: $(kinds_of))" test "$(kinds_of)" = "acquired released "
done
r history hms
check "a shared hold says mode=shared" grep -q 'mode=shared' <<<"$OUT"
r acquire hmw --write --owner tok-w
r acquire hmw --write --owner tok-w
r release hmw --write --owner tok-w
r history hmw --limit 3
check "write: re-entered and a one-level release (left=1)" \
  test "$(kinds_of)" = "acquired re-entered released " -a -n "$(grep 'left=1' <<<"$OUT")"

# --- renewed-late in the read-write and semaphore layouts
for mode in -s --write --limit=2; do
  r acquire "hl${mode//[-=]/}" $mode --owner tok-l --ttl 6s
done
# Under a third of the 6s lease left: late. Each late renewal comes 4.1s plus
# three rlock runs after its acquisition, whatever the mode's place (an
# emulated rlock, ./dev test --arch arm64, takes a tenth of a second or more).
sleep 4.1
for mode in -s --write --limit=2; do
  r renew "hl${mode//[-=]/}" $mode --owner tok-l --ttl 6s
done
for mode in -s --write --limit=2; do
  name=hl${mode//[-=]/}
  r renew "$name" $mode --owner tok-l --ttl 6s
  r history "$name"
  want="acquired renewed-late renewed " # the hold's last renewal, kept as its marker (issue 30)
  [ "$mode" = --limit=2 ] && want="acquired renewed-late " # a permit's lease end is in its set
  check "renew $mode late, then on time: one renewed-late (got: $(kinds_of))" \
    test "$(kinds_of)" = "$want"
  r release "$name" $mode --owner tok-l
done

# --- the command is redacted as in the holder record: no password in the history
r run hpw -- true redis://user:sekret-pw@example:6379 --password sekret-pw2
r history hpw
check "no password in the history (cmd redacted)" test -z "$(grep -e sekret-pw <<<"$OUT")" -a -n "$OUT"
r --json history hpw
check "... nor in --json" test -z "$(grep -e sekret-pw <<<"$OUT")"

# --- names with braces: the log key shares the lock's slot
r acquire '{grp}:job' --owner tok-7
r history '{grp}:job'
check "a name with a {tag}: its history is rlock_log:{grp}:job" \
  test "$(xlen 'rlock_log:{grp}:job')" = 1 -a "$(kinds_of)" = "acquired "
r history 'rlock_log:x'
expect_rc 64 "a name with the form of a history key is refused"

# --- a lock made by Redisson: no history, and history says so
rcli HSET h7 8743c9c0-0795-4907-87fd-6c719a6b4586:1 1 >/dev/null
rcli PEXPIRE h7 30000 >/dev/null
r release h7 --owner 8743c9c0-0795-4907-87fd-6c719a6b4586:1
expect_rc 0 "release of Redisson's hold"
check "Redisson's holds write nothing" test "$(xlen 'rlock_log:{h7}')" = 0
rcli HSET h7 8743c9c0-0795-4907-87fd-6c719a6b4586:1 1 >/dev/null
r history h7
check "history says a Redisson lock has none" grep -q '"h7": made by Redisson: no history' <<<"$OUT"
r --json history h7
check "--json: made_by_redisson" test "$(jget "$OUT" made_by_redisson)" = true
r history never-used
check "a lock without events says so" grep -q 'no history' <<<"$OUT"

# --- sent twice (a lost reply): one event
sha_of() { rcli -x SCRIPT LOAD <"$RLOCK_LUA/$1.lua"; }
ACQ=$(sha_of acquire); REL=$(sha_of release); RENEW=$(sha_of renew)
CTX='[1000,2592000000,"host","h","pid","1","cmd","c","ver","v"]'
N=h8
akeys=(7 $N "redisson_lock_token:{$N}" "rlock_acquire_latch:{$N}:op1" "redisson_lock_queue:{$N}" "redisson_lock_timeout:{$N}" "rlock_waiters:{$N}" "rlock_log:{$N}")
rcli EVALSHA "$ACQ" "${akeys[@]}" tok-8 30000 0 24000 h 1 c v '' '' 0 "$CTX" >/dev/null
rcli EVALSHA "$ACQ" "${akeys[@]}" tok-8 30000 0 24000 h 1 c v '' '' 0 "$CTX" >/dev/null
check "an acquisition sent twice (given token, latch): one event" test "$(ev_kinds $N)" = "acquired "
akeys[3]="rlock_acquire_latch:{$N}:op2"
rcli EVALSHA "$ACQ" "${akeys[@]}" own-8 30000 1 24000 h 1 c v '' '' 0 "$CTX" >/dev/null # busy: tok-8 holds it
rcli EVALSHA "$RENEW" 2 $N "rlock_log:{$N}" tok-8 30000 "$CTX" >/dev/null
rcli PEXPIRE $N 1000 >/dev/null
rcli EVALSHA "$RENEW" 2 $N "rlock_log:{$N}" tok-8 30000 "$CTX" >/dev/null
rcli EVALSHA "$RENEW" 2 $N "rlock_log:{$N}" tok-8 30000 "$CTX" >/dev/null
check "a late renewal sent twice: one renewed-late, one marker of the last renewal" test "$(ev_kinds $N)" = "acquired renewed-late renewed "
rkeys=(7 $N "redisson_lock__channel:{$N}" "redisson_unlock_latch:{$N}:op3" "redisson_lock_queue:{$N}" "redisson_lock_timeout:{$N}" "rlock_waiters:{$N}" "rlock_log:{$N}")
rcli EVALSHA "$REL" "${rkeys[@]}" tok-8 0 PUBLISH 24000 1 "$CTX" >/dev/null
rcli EVALSHA "$REL" "${rkeys[@]}" tok-8 0 PUBLISH 24000 1 "$CTX" >/dev/null
check "a release sent twice (latch): one event" test "$(ev_kinds $N)" = "acquired renewed-late released "
akeys[3]="rlock_acquire_latch:{$N}:op4"
rcli EVALSHA "$ACQ" "${akeys[@]}" own-9 30000 1 24000 h 1 c v '' '' 0 "$CTX" >/dev/null
rcli EVALSHA "$ACQ" "${akeys[@]}" own-9 30000 1 24000 h 1 c v '' '' 0 "$CTX" >/dev/null
check "an acquisition sent twice (the client's own token): one event" \
  test "$(ev_kinds $N)" = "acquired renewed-late released acquired "
check "the script's extra argument is not taken for its own (release without KEYS[7])" \
  test "$(rcli EXISTS $N)" = 1
FU=$(sha_of force_unlock)
fkeys=(11 $N "redisson_lock__channel:{$N}" "redisson_unlock_latch:{$N}:op5" "redisson_lock_queue:{$N}"
  "redisson_lock_timeout:{$N}" "rlock_waiters:{$N}" "redisson_rwlock:{$N}" "{$N}:timeout" "redisson_sc:{$N}"
  "rlock_permits:{$N}" "rlock_log:{$N}")
rcli EVALSHA "$FU" "${fkeys[@]}" PUBLISH 24000 1 "$CTX" >/dev/null
rcli EVALSHA "$FU" "${fkeys[@]}" PUBLISH 24000 1 "$CTX" >/dev/null
check "a force-unlock sent twice (latch): one event, not taken for --if-dead's arguments" \
  test "$(ev_kinds $N)" = "acquired renewed-late released acquired force-unlocked " -a "$(rcli EXISTS $N)" = 0

# --- hostile entries: shown as malformed or escaped, never a crash
rcli XADD 'rlock_log:{h1}' '*' kind $'evil\e[31m' owner $'x\ny' >/dev/null
rcli XADD 'rlock_log:{h1}' '*' nokind 1 >/dev/null
r history h1 --limit 3
expect_rc 0 "history with hostile entries"
check "control characters are escaped" grep -q 'evil\\x1b\[31m owner="x\\ny"' <<<"$OUT"
check "an entry without a kind is shown as malformed" grep -q '(malformed entry' <<<"$OUT"
check "no raw escape reaches the terminal" test -z "$(grep -P '\x1b' <<<"$OUT")"
rcli DEL 'rlock_log:{h9}' >/dev/null
rcli SET 'rlock_log:{h9}' notastream >/dev/null
r acquire h9 --owner tok-9
expect_rc 0 "a history key of another type does not stop the lock"
r history h9
expect_rc 0 "history of a key that is no stream"

# --- settings: RLOCK_HISTORY_MAXLEN=0 writes none; RLOCK_HISTORY_TTL; bad values
RLOCK_HISTORY_MAXLEN=0 "$RLOCK" acquire h10 --owner t >/dev/null
check "RLOCK_HISTORY_MAXLEN=0: no history" test "$(xlen 'rlock_log:{h10}')" = 0
RLOCK_HISTORY_TTL=1h "$RLOCK" release h10 --owner t >/dev/null
ttl=$(rcli PTTL 'rlock_log:{h10}')
check "RLOCK_HISTORY_TTL=1h ($ttl ms)" between "$ttl" 3500000 3600000
for i in $(seq 1 300); do echo "EVALSHA $ACQ 7 h11 redisson_lock_token:{h11} rlock_acquire_latch:{h11}:o$i redisson_lock_queue:{h11} redisson_lock_timeout:{h11} rlock_waiters:{h11} rlock_log:{h11} t 30000 0 24000 h 1 c v '' '' 0 [5,60000]"; done | rcli >/dev/null
len=$(xlen 'rlock_log:{h11}')
check "MAXLEN ~ caps the stream (300 events, max 5: $len kept)" test "$len" -lt 300
RLOCK_HISTORY_MAXLEN=x "$RLOCK" history h1 >/dev/null 2>&1
check "a bad RLOCK_HISTORY_MAXLEN is a warning, not an error (test_history_optional)" test $? = 0

# --- Cluster: the log key is in NAME's slot (CLUSTER KEYSLOT), and the events
# are written and read through a real 3-primary cluster (each routed by its slot)
. "$(dirname "$0")/topology.sh"
start_cluster
CU=redis://127.0.0.1:${CLUSTER_PORTS[0]}
for name in A '{A}:x' 'a{b}c' lock:7; do
  key=$(if [[ $name == *"{"* ]]; then echo "rlock_log:$name"; else echo "rlock_log:{$name}"; fi)
  s1=$(ccli "${CLUSTER_PORTS[0]}" CLUSTER KEYSLOT "$name"); s2=$(ccli "${CLUSTER_PORTS[0]}" CLUSTER KEYSLOT "$key")
  check "CLUSTER KEYSLOT $name ($s1) = $key ($s2)" test -n "$s1" -a "$s1" = "$s2"
  r -u "$CU" run "$name" -- true
  r -u "$CU" history "$name"
  check "Cluster: $name's history is read back through its slot's node (got: $(kinds_of))" \
    test "$(kinds_of)" = "acquired released "
done
r history 'x{}y'
expect_rc 64 "a name whose keys would not share a slot (x{}y: the log key's would differ) is refused"

# --- Redlock: the majority's view
start_redis; P1=$REDIS_PORT; start_redis; P2=$REDIS_PORT; start_redis; P3=$REDIS_PORT
RL=(-u "redis://127.0.0.1:$P1" -u "redis://127.0.0.1:$P2" -u "redis://127.0.0.1:$P3")
r "${RL[@]}" acquire rl1 --owner tok-r
expect_rc 0 "Redlock acquire"
r "${RL[@]}" release rl1 --owner tok-r
r "${RL[@]}" history rl1
check "Redlock: acquired and released, each on 3/3 (got: $(kinds_of))" \
  test "$(kinds_of)" = "acquired released " -a "$(grep -c 'masters=3/3' <<<"$OUT")" = 2
check "Redlock: the text says how it merged" grep -q "majority's view" <<<"$OUT"
redis-cli -p "$P1" DEL 'rlock_log:{rl1}' >/dev/null
r "${RL[@]}" history rl1
check "Redlock: one master without the events: still shown, on 2/3" test "$(grep -c 'masters=2/3' <<<"$OUT")" = 2
redis-cli -p "$P2" DEL 'rlock_log:{rl1}' >/dev/null
r "${RL[@]}" history rl1
check "Redlock: an event on one master of three is not the majority's" test "$(kinds_of)" = ""
redis-cli -p "$P3" XADD 'rlock_log:{rl1}' '*' kind forged owner x >/dev/null
r "${RL[@]}" --json history rl1
check "Redlock --json: a merge note, no forged minority event" \
  "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["merge"] and d["events"] == [], d' "$OUT"

finish
