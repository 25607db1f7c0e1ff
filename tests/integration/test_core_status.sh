#!/usr/bin/env bash
# status: exit codes for named locks, listing held locks (SCAN), --match, the --json document.
. "$(dirname "$0")/lib.sh"
start_redis

names_in() { python3 -c 'import json,sys; print("\n".join(sorted(l["name"] for l in json.loads(sys.argv[1])["locks"])))' "$1"; }
REDISSON_OWNER=8743c9c0-0795-4907-87fd-6c719a6b4586:1

r acquire A --owner oa --ttl 40s; r acquire B --owner ob
r acquire A --owner oa --ttl 40s   # count 2
r status A B
expect_rc 0 "status A B, both held"
r status A B --json
expect_rc 0 "status A B --json, both held"
check "status A B --json parses" is_json "$OUT"
check "status A B --json lists A and B" test "$(names_in "$OUT" | tr '\n' ' ')" = "A B "
# The server as it names itself in its HELLO reply (lib.sh read INFO server:
# Valkey's server_name and valkey_version), whichever RLOCK_TEST_SERVER started.
check "status --json names the server it read: $SERVER_NAME $SERVER_VERSION at $RLOCK_URL" "$PY" -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["servers"] == [{"server": sys.argv[2], "name": sys.argv[3], "version": sys.argv[4]}], d["servers"]
' "$OUT" "$RLOCK_URL" "$SERVER_NAME" "$SERVER_VERSION"
r status A Free
expect_rc 1 "status A Free: one is free"
r status A Free --json
expect_rc 1 "status --json with a free lock"
check "free lock in --json: held false, type null, owner null" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); l=[x for x in d["locks"] if x["name"]=="Free"][0]
assert l["held"] is False and l["type"] is None, l' "$OUT"
r status Free
expect_rc 1 "status Free"
check "status of a free lock says so on stdout" test -n "$OUT"

# --- the full --json document for an rlock-held lock
r status A --json
check "status A --json parses" is_json "$OUT"
check "status --json fields of an rlock lock" python3 -c '
import json,sys,socket
l=json.loads(sys.argv[1])["locks"][0]
for k in ("name","held","type","foreign","ttl_ms","owner","count","owners","fence","holder"):
    assert k in l, "missing "+k
assert l["name"]=="A" and l["held"] is True and l["type"]=="hash" and l["foreign"] is False, l
assert 35000 < l["ttl_ms"] <= 40000, l["ttl_ms"]
assert l["owner"]=="oa" and l["count"]==2, l
assert l["owners"]==[{"owner":"oa","count":2}], l["owners"]
assert isinstance(l["fence"], int) and l["fence"]>=1, l["fence"]
h=l["holder"]
for k in ("host","pid","command","acquired_at_ms","acquired_at","ttl_ms","version"):
    assert k in h, "missing holder."+k
assert isinstance(h["pid"], int) and isinstance(h["acquired_at_ms"], int), h
assert h["ttl_ms"]==40000, h
assert h["acquired_at"].startswith("20") and "T" in h["acquired_at"], h["acquired_at"]
' "$OUT"

# --- a Redisson-made lock, an unrelated hash, a foreign string
rcli HINCRBY 'job:redisson' "$REDISSON_OWNER" 1 >/dev/null
rcli PEXPIRE 'job:redisson' 30000 >/dev/null
rcli HSET user:1 name bob >/dev/null
rcli HSET counters:1 hits 5 >/dev/null         # integer values but no lease: not a lock? (listed or not, never fatal)
rcli SET plain:string hello >/dev/null
rcli SET 'job:str' tok PX 60000 >/dev/null
r acquire 'job:1' --owner j1
r acquire 'other:1' --owner x1

COLUMNS=300 r status
expect_rc 0 "status without names"
echo "$OUT" | sed 's/^/  | /'
check "status lists A" grep -q '^A ' <<<"$OUT"
check "status lists the Redisson-made lock" grep -q 'job:redisson' <<<"$OUT"
check "status shows the Redisson owner" grep -qF "$REDISSON_OWNER" <<<"$OUT"
check "status does not list user:1 (HSET user:1 name bob)" bash -c '! grep -q "user:1" <<<"$1"' _ "$OUT"
r status --json
expect_rc 0 "status --json without names"
check "status --json parses" is_json "$OUT"
listed=$(names_in "$OUT" | tr '\n' ' '); echo "  listed: $listed"
check "status --json lists A, B, job:1, other:1, job:redisson" python3 -c '
import json,sys; n={l["name"] for l in json.loads(sys.argv[1])["locks"]}
assert {"A","B","job:1","other:1","job:redisson"} <= n, n' "$OUT"
check "status --json does not list user:1 nor plain:string" python3 -c '
import json,sys; n={l["name"] for l in json.loads(sys.argv[1])["locks"]}
assert "user:1" not in n and "plain:string" not in n, n' "$OUT"
check "status --json lists no fencing counters or companion keys" python3 -c '
import json,sys; n={l["name"] for l in json.loads(sys.argv[1])["locks"]}
assert not [x for x in n if x.startswith("redisson_lock")], n' "$OUT"
check "Redisson lock in --json: owner, count 1, holder null, not foreign" python3 -c '
import json,sys; l=[x for x in json.loads(sys.argv[1])["locks"] if x["name"]=="job:redisson"][0]
assert l["owner"]==sys.argv[2] and l["count"]==1 and l["holder"] is None and l["foreign"] is False and l["held"] is True, l' "$OUT" "$REDISSON_OWNER"
check "every listed lock is held" python3 -c '
import json,sys; assert all(l["held"] for l in json.loads(sys.argv[1])["locks"])' "$OUT"

r status --match 'job:*' --json
expect_rc 0 "status --match 'job:*'"
check "--match job:* parses" is_json "$OUT"
m=$(names_in "$OUT" | tr '\n' ' '); echo "  --match 'job:*': $m"
check "--match job:* lists job:1 and job:redisson only among the locks" python3 -c '
import json,sys; n={l["name"] for l in json.loads(sys.argv[1])["locks"]}
assert {"job:1","job:redisson"} <= n and not (n & {"A","B","other:1","user:1"}), n
assert all(x.startswith("job:") for x in n), n' "$OUT"
r status --match 'job:*'
expect_rc 0 "status --match text"
check "--match text has job:1, not other:1" bash -c 'grep -q "job:1" <<<"$1" && ! grep -q "other:1" <<<"$1"' _ "$OUT"
r status --match 'nomatch:*' --json
check "--match with no match: empty list, valid JSON" test "$(jget "$OUT" locks)" = "[]"

# --- many keys: SCAN goes through every page
for i in $(seq 1 300); do printf 'HSET bulk:%d name x\n' "$i"; done | rcli >/dev/null
r acquire 'zz:last' --owner z
r status --json
check "status finds a lock among 300 unrelated hashes" python3 -c '
import json,sys; n={l["name"] for l in json.loads(sys.argv[1])["locks"]}; assert "zz:last" in n and not [x for x in n if x.startswith("bulk:")], n' "$OUT"

finish
