#!/usr/bin/env bash
# status kinds: rlock, Redisson RLock (no record), fair (queued), read-write,
# semaphore and foreign keys, in text and in JSON (with its "schema"); --match;
# and a measurement (not an assertion): how long 10 000 locks take to list.
. "$(dirname "$0")/lib.sh"
start_redis

"$RLOCK" acquire k:rlock --ttl 60s >/dev/null
rcli HSET k:redisson 8743c9c0-0795-4907-87fd-6c719a6b4586:1 1 >/dev/null
rcli PEXPIRE k:redisson 60000 >/dev/null
"$RLOCK" acquire k:fair --fair --ttl 60s >/dev/null
"$RLOCK" acquire k:fair --fair -w 10s >/dev/null & # queued behind: the lock is "fair" while someone waits
_pids+=("$!")
queued() { [ "$(rcli ZCARD 'redisson_lock_timeout:{k:fair}')" = 1 ]; }
check "a fair waiter is queued" wait_until 5 queued
"$RLOCK" acquire k:read -s --ttl 60s >/dev/null
"$RLOCK" acquire k:write --write --ttl 60s >/dev/null
"$RLOCK" acquire k:sem --limit 2 --ttl 60s >/dev/null
rcli SET k:string tok PX 60000 >/dev/null

r status --match 'k:*' --json
expect_rc 0 "status --match 'k:*' --json"
check "schema 1 at the top" test "$(jget "$OUT" schema)" = 1
check "each lock has its kind" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); k={l["name"]:l["kind"] for l in d["locks"]}
assert k=={"k:rlock":"rlock","k:redisson":"redisson","k:fair":"fair","k:read":"read-write",
           "k:write":"read-write","k:sem":"semaphore"}, k' "$OUT"
r status k:string k:free --json
expect_rc 1 "status of a foreign key and a free name"
check "a foreign string is kind foreign, a free name kind null" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); k={l["name"]:l["kind"] for l in d["locks"]}
assert k=={"k:string":"foreign","k:free":None}, k' "$OUT"
COLUMNS=80 r status --match 'k:*'
echo "$OUT" | sed 's/^/  | /'
check "text: a table with every column" grep -qE '^NAME +KIND +N +HELD +TTL +RENEWED +W +FENCE +HOLDER$' <<<"$OUT"
check "text, COLUMNS=80: every line fits 80 columns" python3 -c '
import sys; w=[len(l) for l in sys.argv[1].splitlines()]; assert max(w) <= 80, w' "$OUT"
# Off a terminal, without COLUMNS, nothing is cut (issue 19: `rlock status |
# grep TOKEN` found no Redisson token, cut at 80 columns with "…").
LONG_TOK=8743c9c0-0795-4907-87fd-6c719a6b4586-a-very-long-redisson-owner-token-that-would-not-fit:1
rcli HSET k:long "$LONG_TOK" 1 >/dev/null
rcli PEXPIRE k:long 60000 >/dev/null
(unset COLUMNS; "$RLOCK" status --match 'k:*' >"$TEST_TMP/wide.out")
check "text off a terminal: a long owner token is printed whole" grep -qF "$LONG_TOK" "$TEST_TMP/wide.out"
check "text off a terminal: no line is cut with …" bash -c '! grep -q "…" "$1"' _ "$TEST_TMP/wide.out"
rcli DEL k:long >/dev/null
check "text: each kind in its row" bash -c 'for k in rlock:rlock redisson:redisson fair:fair read:read write:write sem:permit; do grep -qE "^k:${k%%:*} +${k#*:} " <<<"$1" || { echo "no row k:${k%%:*} ${k#*:}"; exit 1; }; done' _ "$OUT"
check "text: the Redisson lock shows its owner token, the rlock lock host:pid and command" bash -c 'grep -qE "^k:redisson .* 8743c9c0-0795-4907-" <<<"$1" && grep -qE "^k:rlock .* $(hostname):[0-9]+ " <<<"$1"' _ "$OUT"
check "text: the fair waiter is listed under the table" grep -qE '^k:fair: 1 waiting, in order: 1\. ' <<<"$OUT"
check "text: the semaphore's free permits" grep -qx 'k:sem: 1 permit free' <<<"$OUT"
check "text: no colour off a terminal" bash -c '! grep -q $(printf "\x1b") <<<"$1"' _ "$OUT"
r status k:string
check "text: a foreign string" grep -qE '^k:string +foreign ' <<<"$OUT"
check "text: and its details under the table" grep -q '^k:string: held by a foreign string key' <<<"$OUT"
r status --match 'k:r*' --json
check "--match narrows the list" python3 -c '
import json,sys; n=sorted(l["name"] for l in json.loads(sys.argv[1])["locks"]); assert n==["k:read","k:redisson","k:rlock"], n' "$OUT"

# --- 10 000 locks: the time is reported, not asserted
python3 - "$REDIS_PORT" <<'PY' | rcli --pipe >/dev/null
import sys
for i in range(10000):
    name = "bulk:%05d" % i
    meta = '{"host":"h","pid":%d,"command":"job %d","acquired_at_ms":1700000000000,"ttl_ms":600000,"fence":%d}' % (1000 + i, i, i)
    for args in (["HSET", name, "tok%d" % i, "1", "rlock:meta", meta], ["PEXPIRE", name, "600000"]):
        sys.stdout.write("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a.encode()), a) for a in args))
PY
start=$(now_ms)
r status --match 'bulk:*' --json
elapsed=$(( $(now_ms) - start ))
count=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["locks"]))' "$TEST_TMP/out")
OUT="(10 000 locks)"
check "10 000 locks listed (got $count)" test "$count" = 10000
start=$(now_ms)
r status --match 'bulk:*'
text_elapsed=$(( $(now_ms) - start ))
lines=$(wc -l <"$TEST_TMP/out")
OUT="(10 000 lines)"
check "10 000 rows of text and a header (got $lines)" test "$lines" = 10001
echo "measurement: status --json of 10000 locks took ${elapsed}ms; text ${text_elapsed}ms"

finish
