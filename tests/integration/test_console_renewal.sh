#!/usr/bin/env bash
# The last renewal: each renewal writes renewed_at_ms (server time) into the
# holder's record in the same script, in every layout (plain, fair, read, write,
# permits); status shows it in text and JSON, and it advances during a run.
. "$(dirname "$0")/lib.sh"
start_redis

# renewed_of JSON [PATH]: the renewed_at_ms at PATH (default: the first lock's holder), or "null".
renewed_of() { jget "$1" "${2:-locks.0.holder}.renewed_at_ms"; }
renewed_now() { r status "$1" --json; renewed_of "$OUT" "${2:-}"; }
has_renewal() { [ "$(renewed_now "$@")" != null ]; }

# --- a plain run: renewals every TTL/3 move it forward
runs=()
"$RLOCK" run plain --ttl 900ms -- sleep 4 &
runs+=("$!"); _pids+=("$!")
wait_until 5 key_there plain
r status plain --json
check "no renewal yet right after acquisition" test "$(renewed_of "$OUT")" = null
check "the first renewal is recorded" wait_until 3 has_renewal plain
first=$(renewed_now plain)
acquired=$(jget "$OUT" locks.0.holder.acquired_at_ms)
check "renewed after acquisition" test "$first" -gt "$acquired"
advanced() { [ "$(renewed_now plain)" -gt "$first" ]; }
check "renewed_at_ms advances during the run" wait_until 3 advanced
r status plain --json
check "--json has renewed_at (UTC)" python3 -c '
import json,sys; h=json.loads(sys.argv[1])["locks"][0]["holder"]
assert h["renewed_at"].endswith("Z") and h["renewed_at"].startswith("20"), h' "$OUT"
r status plain
check "text says when it last renewed" grep -q ', renewed 20[0-9-]*T[0-9:]*Z' <<<"$OUT"
echo "$OUT" | sed 's/^/  | /'

# --- every other layout
"$RLOCK" run fair --fair --ttl 900ms -- sleep 3 &
runs+=("$!"); _pids+=("$!")
"$RLOCK" run rw-read -s --ttl 900ms -- sleep 3 &
runs+=("$!"); _pids+=("$!")
"$RLOCK" run rw-write --write --ttl 900ms -- sleep 3 &
runs+=("$!"); _pids+=("$!")
"$RLOCK" run sem --limit 2 --ttl 900ms -- sleep 3 &
runs+=("$!"); _pids+=("$!")
check "fair: recorded" wait_until 3 has_renewal fair
check "read-write, a reader: recorded in its own record" wait_until 3 has_renewal rw-read locks.0.holders.0.holder
check "read-write, the writer: recorded" wait_until 3 has_renewal rw-write
check "semaphore, a permit: recorded in its record" wait_until 3 has_renewal sem locks.0.holders.0.holder

# --- renew by hand records it too; a Redisson hold (no record) gets none
owner=$("$RLOCK" acquire byhand --ttl 30s)
r renew byhand --owner "$owner"
expect_rc 0 "renew by hand"
check "renew by hand records it" has_renewal byhand
rcli HSET redisson tok 1 >/dev/null
rcli PEXPIRE redisson 30000 >/dev/null
r renew redisson --owner tok
expect_rc 0 "renew of a record-less (Redisson) hold"
check "no record is made for it" test "$(rcli HEXISTS redisson rlock:meta)" = 0
rcli HSET odd tok 1 rlock:meta '["not","an","object"]' >/dev/null
rcli PEXPIRE odd 30000 >/dev/null
r renew odd --owner tok
expect_rc 0 "renew with a record that is not an object"
check "that record is left as it is" test "$(rcli HGET odd rlock:meta)" = '["not","an","object"]'

# --- force-unlock --if-dead: a renewal after the judgement is no new hold
bash -c '"$1" acquire judged --owner jt --ttl 30s >/dev/null; true' _ "$RLOCK"
before=$(rcli HGET judged rlock:meta)
r renew judged --owner jt
check "the record changed by the renewal" test "$(rcli HGET judged rlock:meta)" != "$before"
cond() { redis-cli -p "$REDIS_PORT" --eval "$RLOCK_LUA/force_unlock.lua" judged "redisson_lock__channel:{judged}" "latch:{judged}:$1" , PUBLISH 10000 1 jt "$2"; }
check "another fence is another hold: {2}" test "$(cond a "${before/\"fence\":/\"fence\":1}" | head -1)" = 2
check "the record read before the renewal still names the hold: removed" test "$(cond b "$before" | head -1)" = 1
check "judged is gone" key_gone judged

wait "${runs[@]}" # each ends with its sleep
check "every run released its lock" bash -c 'for k in plain fair rw-read rw-write; do [ "$(redis-cli -p '"$REDIS_PORT"' EXISTS $k)" = 0 ] || exit 1; done'

finish
