#!/usr/bin/env bash
# doctor: eviction policy, persistence, replicas without min-replicas-to-write,
# version and clock, each with its setting, a verdict and why; exit 1 when
# something is unsafe, 0 otherwise; --json parses; a user without CONFIG
# permission (the guide's ACL user, docs/security.md) gets "cannot check X: no permission".
. "$(dirname "$0")/lib.sh"
start_redis # lib.sh: --save '' --appendonly no
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

# verdict_of JSON CHECK: the verdict of the first finding of that check.
verdict_of() { python3 -c '
import json,sys; d=json.loads(sys.argv[1]); print([f["verdict"] for f in d["findings"] if f["check"]==sys.argv[2]][0])' "$1" "$2"; }

# --- no persistence, then an eviction policy that evicts locks
r doctor
expect_rc 1 "save '' and appendonly no: unsafe"
echo "$OUT" | sed 's/^/  | /'
check "text names the setting, the verdict and why" grep -q '^unsafe  redis://127.0.0.1:[0-9]* persistence: save "", appendonly no: no persistence: a restart drops every lock' <<<"$OUT"
check "text ends with a summary" grep -q '^1 unsafe, 0 warning(s)' <<<"$(tail -1 <<<"$OUT")"
# As the server names itself (lib.sh read INFO server: Valkey's server_name and
# valkey_version, else redis_version), whichever RLOCK_TEST_SERVER started.
check "the version finding names the server as it names itself: ${SERVER_NAME}_version $SERVER_VERSION" \
  grep -q "^ok      redis://127.0.0.1:[0-9]* version: ${SERVER_NAME}_version $SERVER_VERSION: every rlock feature works" <<<"$OUT"
rcli CONFIG SET maxmemory-policy allkeys-lru >/dev/null
r doctor --json
expect_rc 1 "allkeys-lru: unsafe"
check "--json parses" is_json "$OUT"
check "--json: schema 1, safe false" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); assert d["schema"]==1 and d["safe"] is False, d
for f in d["findings"]: assert set(f)=={"server","check","setting","verdict","why"}, f' "$OUT"
check "--json: eviction unsafe" test "$(verdict_of "$OUT" eviction)" = unsafe
check "--json: the setting is named" grep -q '"setting":"maxmemory-policy allkeys-lru"' <<<"$OUT"
check "--json: persistence unsafe" test "$(verdict_of "$OUT" persistence)" = unsafe
check "--json: version and clock are ok" test "$(verdict_of "$OUT" version) $(verdict_of "$OUT" clock)" = "ok ok"

# --- appendonly yes and noeviction pass
rcli CONFIG SET maxmemory-policy noeviction >/dev/null
rcli CONFIG SET appendonly yes >/dev/null
r doctor --json
expect_rc 0 "appendonly yes and noeviction: nothing unsafe"
check "--json: safe true, eviction and persistence ok" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); assert d["safe"] is True, d
v={f["check"]:f["verdict"] for f in d["findings"]}; assert v["eviction"]=="ok" and v["persistence"]=="ok", v' "$OUT"

# --- a replica without min-replicas-to-write: a warning, not unsafe
RPORT=$(free_port)
mkdir -p "$TEST_TMP/replica"
(cd "$TEST_TMP/replica" && exec "${REDIS_SERVER_CMD[@]}" --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
  --replicaof 127.0.0.1 "$REDIS_PORT" >log 2>&1) &
_pids+=("$!")
replica_up() { rcli INFO replication | grep -q '^connected_slaves:1'; }
check "the replica connected" wait_until 10 replica_up
r doctor --json
expect_rc 0 "a replica without min-replicas-to-write, rlock's default replica sync: ok"
check "replication: ok (rlock waits for a replica by default)" test "$(verdict_of "$OUT" replication)" = ok
r doctor
check "doctor says rlock waits for a replica by default" grep -q 'rlock waits for one replica' <<<"$OUT"
r doctor --json --sync-replicas 0
expect_rc 0 "a replica without min-replicas-to-write, --sync-replicas 0: a warning only"
check "--sync-replicas 0: replication: warning" test "$(verdict_of "$OUT" replication)" = warning
RLOCK_SYNC_REPLICAS=0 r doctor
check "RLOCK_SYNC_REPLICAS=0: doctor says the replica sync is off" grep -q "replica sync is off" <<<"$OUT"
rcli CONFIG SET min-replicas-to-write 1 >/dev/null
r doctor --json
check "min-replicas-to-write 1: replication ok" test "$(verdict_of "$OUT" replication)" = ok
rcli CONFIG SET min-replicas-to-write 0 >/dev/null

# --- the guide's lock-only ACL user has no CONFIG (INFO only for the replica sync); its URL comes from
# RLOCK_URL (a password typed in -u would earn a warning on stderr)
line=$(grep -m1 '^ACL SETUSER rlock ' "$SRC/docs/security.md")
set -f; read -ra words <<<"${line/>CHANGE-ME/>acl-pw}"; set +f
check "the guide's ACL user is created" test "$(rcli "${words[@]}")" = OK
RLOCK_URL="redis://rlock:acl-pw@127.0.0.1:$REDIS_PORT" r doctor
expect_rc 0 "doctor as a user without CONFIG: warnings, nothing unsafe"
echo "$OUT" | sed 's/^/  | /'
check "says: cannot check maxmemory-policy: no permission" grep -q '^warning .* eviction: maxmemory-policy: cannot check maxmemory-policy: no permission' <<<"$OUT"
check "says: cannot check persistence: no permission" grep -q 'cannot check persistence: no permission' <<<"$OUT"
check "counts the replicas (the guide's user has +info, for the default replica sync)" \
  eval '! grep -q "cannot check replicas" <<<"$OUT"'
check "... and, with rlock's replica sync on, the replication finding is ok" grep -q '^ok .* replication: [0-9]* replicas, min-replicas-to-write unknown; rlock waits for' <<<"$OUT"
check "no error line" test -z "$ERR"
RLOCK_URL="redis://rlock:acl-pw@127.0.0.1:$REDIS_PORT" r doctor --json
check "--json as that user parses" is_json "$OUT"

# --- a Redlock with a master down: that master is unsafe; a single server down: exit 69
DOWN=$(free_port)
FIRST_URL=$RLOCK_URL FIRST_PORT=$REDIS_PORT
start_redis # a second, independent master (db 1 of the first would be the same server: 64)
SECOND_URL=$RLOCK_URL
export RLOCK_URL=$FIRST_URL REDIS_PORT=$FIRST_PORT
r doctor -u "$RLOCK_URL" -u "redis://127.0.0.1:$DOWN" -u "$SECOND_URL" --json
expect_rc 1 "a Redlock master that cannot be reached is unsafe"
check "its finding says so" test "$(verdict_of "$OUT" reachable)" = unsafe
r doctor -u "redis://127.0.0.1:$DOWN"
expect_rc 69 "a single server that cannot be reached: exit 69"
check "one error line" one_err_line

finish
