#!/usr/bin/env bash
# force-unlock --if-dead: the holder record names the holder's boot and process
# start time; a lock whose recorded process is gone (or is another process now)
# is removed, a live holder, another host or boot, a record-less or unreadable
# record is refused with the busy exit code (75, -E's when given: the lock is
# held and stays so) and the reason; a free lock is 1 (nothing to remove); the
# removal is conditional.
. "$(dirname "$0")/lib.sh"
start_redis

HOST=$(python3 -c 'import socket; print(socket.gethostname())')
BOOT=$(cat /proc/sys/kernel/random/boot_id)
ticks_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; } # field 22
# put_lock NAME RECORD: an rlock-shaped hold by owner 'tok' with that record.
put_lock() {
  rcli DEL "$1" >/dev/null
  rcli HSET "$1" tok 1 rlock:meta "$2" >/dev/null
  rcli PEXPIRE "$1" 60000 >/dev/null
}

# --- the record carries boot id and start time (acquire: of the calling process)
bash -c '"$1" acquire gone --ttl 60s >/dev/null; true' _ "$RLOCK"
r status gone --json
check "acquire records boot_id and start_ticks" python3 -c '
import json,sys; h=json.loads(sys.argv[1])["locks"][0]["holder"]
assert h["boot_id"]==sys.argv[2] and isinstance(h["start_ticks"],int) and h["start_ticks"]>0, h' "$OUT" "$BOOT"
dead_pid=$(jget "$OUT" locks.0.holder.pid)
check "the recorded parent (bash -c) has exited" dead "$dead_pid"
r force-unlock --if-dead gone
expect_rc 0 "--if-dead removes a lock whose recorded holder exited"
check "it says why" grep -q "removed \"gone\": pid $dead_pid is gone" <<<"$ERR"
check "the lock is gone" key_gone gone

# refused NAME WHY WHAT: --if-dead NAME exits 75 (busy), its message holds WHY, the lock stays.
refused() {
  r force-unlock --if-dead "$1"
  expect_rc 75 "--if-dead refuses $3"
  check "$1: says '$2'" grep -qF "$2" <<<"$ERR"
  check "$1: one error line" one_err_line
  check "$1 stays" key_there "$1"
}

# --- a live holder: run (the rlock process started, which holds and renews)
"$RLOCK" run live --ttl 60s -- sleep 30 & # first renewal 20s on: the checks below see it unrenewed
run_pid=$!
_pids+=("$run_pid")
wait_until 5 key_there live
r status live --json
sup=$(jget "$OUT" locks.0.holder.pid)
check "run records itself (the rlock started here, pid $run_pid; recorded $sup)" test "$sup" = "$run_pid"
check "run records its start time" test "$(jget "$OUT" locks.0.holder.start_ticks)" = "$(ticks_of "$sup")"
r force-unlock --if-dead live
expect_rc 75 "--if-dead refuses a live holder: busy, not 'nothing to remove'"
check "says: alive, pid, command, since" grep -qF "not removed: alive: pid $sup (sleep ***) still runs, holding it since 20" <<<"$ERR"
check "one error line" one_err_line
# issue 43: a run not renewed yet is not explained as a plain acquire
check "a fresh run: 'not renewed yet', a run renewing at a third of its lease (20s)" \
  grep -qE "; taken [0-9.]+m?s ago, not renewed yet \(a .run. renews a third of its lease, 20s, after taking it\)" <<<"$ERR"
check "a fresh run is not called a plain acquire" eval '! grep -q "plain \`acquire\`" <<<"$ERR"'
check "the live lock stays" key_there live
r -E 9 force-unlock --if-dead live
expect_rc 9 "-E 9: a live holder's refusal is the busy code, remapped"
r force-unlock --if-dead live --json
expect_rc 75 "--if-dead --json on a live holder"
check "--json: removed false, a reason, the lock as it was" python3 -c '
import json,sys; d=json.loads(sys.argv[1])
assert d["removed"] is False and d["reason"].startswith("alive: pid") and d["was"]["name"]=="live", d' "$OUT"
kill "$run_pid"; wait "$run_pid" 2>/dev/null

# --- issue 19 defect 3: an acquire's token re-entered by a renewing run. The
# acquire's process is gone, but the run keeps the lock alive: the re-entry
# makes the record name the run, and a renewal within the last
# lease is proof of life. Before the fix --if-dead said "pid ... is gone",
# removed the lock, an intruder took it, and the run ended 76.
re_tok=$(bash -c '"$1" acquire RE; true' _ "$RLOCK")
re_acq=$(rcli HGET RE rlock:meta | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
check "the acquire's recorded process has exited" dead "$re_acq"
BG_ENV=(RLOCK_OWNER="$re_tok")
bg "$TEST_TMP/re" run --ttl 3s RE -- sleep 5
BG_ENV=()
re_count() { [ "$(rcli HGET RE "$re_tok")" = 2 ]; }
check "the run re-entered RE" wait_until 5 re_count
re_renewed() { rcli HGET RE rlock:meta | grep -q renewed_at_ms; }
check "the run renewed RE" wait_until 5 re_renewed
re_sup=$(rcli HGET RE rlock:meta | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
check "the record names the run now (pid $re_sup, not $re_acq)" test "$re_sup" != "$re_acq" -a -d "/proc/$re_sup"
r force-unlock --if-dead RE
expect_rc 75 "--if-dead refuses a lock re-entered by a live, renewing run"
check "RE: says it is alive" grep -q "not removed: alive" <<<"$ERR"
check "RE: one error line" one_err_line
check "RE stays" key_there RE
r acquire RE -n
expect_rc 75 "an intruder cannot take RE"
check "the run ends 0, never having lost RE" wait_until 15 bg_done "$TEST_TMP/re"
check "... exit 0 (got $(bg_rc "$TEST_TMP/re"))" test "$(bg_rc "$TEST_TMP/re")" = 0
# Before the run's first renewal (TTL 30s: due in 10s) only the record can
# tell: the re-entry itself must name the run, in each exclusive layout. (The
# explorer found --fair left out: "pid ... is gone", removed.)
for mode in plain --fair; do
  flag=${mode#plain}
  ren=RN${flag:+F}
  tok=$(bash -c '"$1" acquire $2 "$3"; true' _ "$RLOCK" "$flag" "$ren")
  BG_ENV=(RLOCK_OWNER="$tok")
  bg "$TEST_TMP/rn$mode" run $flag --ttl 30s "$ren" -- sleep 3
  BG_ENV=()
  check "$mode: the run re-entered $ren" wait_until 5 eval '[ "$(rcli HGET "$ren" "$tok")" = 2 ]'
  r force-unlock --if-dead "$ren"
  expect_rc 75 "$mode: --if-dead refuses a lock re-entered by a run, before its first renewal"
  check "$mode: $ren stays" key_there "$ren"
  check "$mode: the run ends 0" wait_until 10 bg_done "$TEST_TMP/rn$mode"
  check "$mode: ... exit 0 (got $(bg_rc "$TEST_TMP/rn$mode"))" test "$(bg_rc "$TEST_TMP/rn$mode")" = 0
done
# The judgement alone (a record naming a dead process, renewed just now with
# a lease still running) refuses too.
put_lock renewed "{\"host\":\"$HOST\",\"boot_id\":\"$BOOT\",\"pid\":$dead_pid,\"ttl_ms\":60000,\"renewed_at_ms\":$(( $(date +%s%3N) - 1000 ))}"
refused renewed "renewed" "a record of a dead pid renewed within its lease"
put_lock stale "{\"host\":\"$HOST\",\"boot_id\":\"$BOOT\",\"pid\":$dead_pid,\"ttl_ms\":5000,\"renewed_at_ms\":$(( $(date +%s%3N) - 60000 ))}"
r force-unlock --if-dead stale
expect_rc 0 "--if-dead removes a dead pid's lock last renewed longer than a lease ago"

# --- pid reuse: the recorded pid runs, but it is another process (start time differs)
put_lock reused "{\"host\":\"$HOST\",\"boot_id\":\"$BOOT\",\"pid\":$$,\"start_ticks\":$(( $(ticks_of $$) + 1 )),\"command\":\"x\"}"
r force-unlock --if-dead reused
expect_rc 0 "--if-dead removes a lock whose pid now belongs to another process"
check "says the pid is another process now" grep -q "pid $$ is another process now" <<<"$ERR"
check "reused is gone" key_gone reused
# ... and the same pid with its true start time is alive
put_lock same "{\"host\":\"$HOST\",\"boot_id\":\"$BOOT\",\"pid\":$$,\"start_ticks\":$(ticks_of $$),\"command\":\"x\"}"
refused same "alive: pid $$ (x) still runs" "a record whose pid and start time match a running process"
# an older record without a start time: a running pid is no proof
put_lock nostart "{\"host\":\"$HOST\",\"pid\":$$}"
refused nostart "no start time" "a running pid when no start time is recorded"

# --- another host, another boot, no record, unreadable record, a foreign key
put_lock elsewhere "{\"host\":\"elsewhere.example\",\"pid\":$dead_pid,\"start_ticks\":1}"
refused elsewhere "another host (elsewhere.example)" "a holder on another host"
put_lock reboot "{\"host\":\"$HOST\",\"boot_id\":\"00000000-old-boot\",\"pid\":$dead_pid,\"start_ticks\":1}"
refused reboot "another boot" "a record of another boot"
rcli HSET redisson 8743c9c0-0795-4907-87fd-6c719a6b4586:1 1 >/dev/null
rcli PEXPIRE redisson 60000 >/dev/null
refused redisson "no holder record" "a lock without a record (Redisson's)"
put_lock garbled '{"host": 12, "pid": "x"'
refused garbled "unreadable holder record" "an unreadable record"
rcli SET foreign tok PX 60000 >/dev/null
refused foreign "not a lock hash (a string key)" "a foreign string key"
r force-unlock --if-dead nothing
expect_rc 1 "--if-dead on a free lock: nothing to remove (1, not the busy code)"
check "says nothing to remove" grep -q 'nothing to remove' <<<"$ERR"
r force-unlock --if-dead nothing --json
expect_rc 1 "--if-dead --json on a free lock"
check "--json: removed false, the reason" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); assert d["removed"] is False and d["reason"].startswith("nothing to remove"), d' "$OUT"

# --- the removal is conditional: the script removes only the hold that was judged
put_lock cond "{\"host\":\"$HOST\",\"pid\":$dead_pid}"
cond() { redis-cli -p "$REDIS_PORT" --eval "$RLOCK_LUA/force_unlock.lua" cond "redisson_lock__channel:{cond}" "latch:{cond}:$1" , PUBLISH 10000 1 "$2" "$3"; }
check "another record: {2}, nothing changed" test "$(cond a tok '{"host":"other"}' | head -1)" = 2
check "another owner: {2}, nothing changed" test "$(cond b other "{\"host\":\"$HOST\",\"pid\":$dead_pid}" | head -1)" = 2
check "cond is still there" key_there cond
check "the same owner and record: removed" test "$(cond c tok "{\"host\":\"$HOST\",\"pid\":$dead_pid}" | head -1)" = 1
check "cond is gone" key_gone cond

# --- plain force-unlock is unchanged: it removes a live holder's lock
put_lock plain "{\"host\":\"$HOST\",\"boot_id\":\"$BOOT\",\"pid\":$$,\"start_ticks\":$(ticks_of $$)}"
r force-unlock plain
expect_rc 0 "plain force-unlock removes a live holder's lock"
check "plain is gone" key_gone plain

# --- a Redlock has no single record
# (three servers: db 1 and 2 of this one would be refused as the same server)
r force-unlock --if-dead x -u "$RLOCK_URL" -u "redis://127.0.0.1:1" -u "redis://127.0.0.1:2"
expect_rc 64 "--if-dead with several URLs is a usage error"
check "it says why (--if-dead takes one URL)" grep -q -- "--if-dead takes one URL" <<<"$ERR"

finish
