#!/usr/bin/env bash
# URL forms: unix:// sockets, /db and ?db=N select the database, the default URL.
. "$(dirname "$0")/lib.sh"
start_redis

H="127.0.0.1:$REDIS_PORT"

# --- unix socket
r -u "unix://$REDIS_SOCK" acquire U --owner u
expect_rc 0 "unix://\$REDIS_SOCK acquire"
check "the lock is in the server (db 0)" test "$(rcli HGET U u)" = 1
r -u "unix://$REDIS_SOCK" status U --json
expect_rc 0 "unix:// status"
check "status --json parses" python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$OUT"
r -u "unix://$REDIS_SOCK" release U --owner u
expect_rc 0 "unix:// release"
check "released" test "$(rcli EXISTS U)" = 0
RLOCK_URL="unix://$REDIS_SOCK" r acquire U2
expect_rc 0 "RLOCK_URL=unix://..."

# --- /db selects the database
r -u "redis://$H/3" acquire DB --owner d3
expect_rc 0 "redis://host:port/3 acquire"
check "the lock is in db 3" test "$(rcli -n 3 EXISTS DB)" = 1
check "the lock is not in db 0" test "$(rcli -n 0 EXISTS DB)" = 0
check "the fencing counter is in db 3" test "$(rcli -n 3 EXISTS 'redisson_lock_token:{DB}')" = 1
r -u "redis://$H" acquire DB --owner d0
expect_rc 0 "the same name in db 0 is a different lock"
r -u "redis://$H/3" acquire DB -n
expect_rc 75 "db 3's lock is busy in db 3"
r -u "redis://$H/3" status --json
check "status in db 3 lists DB held by d3" python3 -c '
import json,sys; l=[x for x in json.load(sys.stdin)["locks"] if x["name"]=="DB"]; assert l and l[0]["owner"]=="d3", l' <<<"$OUT"
r -u "redis://$H/3" release DB --owner d3
expect_rc 0 "release in db 3"
check "db 3 lock gone, db 0 lock still there" test "$(rcli -n 3 EXISTS DB)$(rcli -n 0 EXISTS DB)" = 01

r -u "unix://$REDIS_SOCK?db=4" acquire DBU --owner d4
expect_rc 0 "unix://...?db=4 acquire"
check "the unix ?db=4 lock is in db 4 only" test "$(rcli -n 4 EXISTS DBU)$(rcli -n 0 EXISTS DBU)" = 10
r -u "unix://$REDIS_SOCK?db=4" release DBU --owner d4
expect_rc 0 "unix ?db=4 release"

r -u "redis://$H/99" acquire X
echo "  db 99 (server has 16): rc $RC: $ERR"
check "a db the server lacks is an error (not 0)" test "$RC" != 0
check "a db the server lacks: one 'rlock: ' line" bash -c '[[ $1 == "rlock: "* ]]' _ "$ERR"

# --- URL forms without port / with localhost
r -u "redis://localhost:$REDIS_PORT" acquire LH
expect_rc 0 "redis://localhost:PORT"

# --- redis-cluster:// (issue 33): the seeds of a Cluster, not a Redlock
DEAD=$(free_port)
r -u "redis-cluster://127.0.0.1:$DEAD,$H" status X
check "redis-cluster:// of a standalone server: an error that names the node (rc $RC: $ERR)" \
  eval '[ "$RC" != 0 ] && [ "$RC" != 64 ] && grep -q "redis://$H: ERR This instance has cluster support disabled" <<<"$ERR"'
r -u "redis-cluster://127.0.0.1:$DEAD,127.0.0.1:$(free_port)" --connect-timeout 500ms acquire X
expect_rc 69 "redis-cluster:// with every seed down"
check "it names each seed (${ERR})" grep -q "no node of the cluster answered (redis://127.0.0.1:$DEAD: cannot connect" <<<"$ERR"
r -u "redis-cluster://$H/2" status X
expect_rc 64 "redis-cluster:// with a database other than 0"
check "it says why ($ERR)" grep -q "a Redis Cluster has database 0 only" <<<"$ERR"
RLOCK_URL="redis-cluster://127.0.0.1:$DEAD,$H" r status X
check "RLOCK_URL keeps a redis-cluster:// seed list whole (one URL, not a Redlock: rc $RC)" \
  eval '! grep -q "same server\|Redlock\|quorum" <<<"$ERR" && grep -q "cluster support disabled" <<<"$ERR"'
RLOCK_URL="redis://127.0.0.1:$DEAD,redis://$H" r --connect-timeout 300ms status X
check "RLOCK_URL=redis://A,redis://B is still a Redlock of two masters (rc $RC: $ERR)" \
  eval '[ "$RC" = 69 ] && grep -q "2 masters\|majority\|quorum\|masters" <<<"$ERR$OUT"'
r -u "redis://127.0.0.1:$DEAD,127.0.0.1:$REDIS_PORT" status X
expect_rc 64 "redis://A,B (one URL, two hosts) is refused"
check "it points to redis-cluster:// and to several URLs ($ERR)" \
  eval 'grep -q "redis-cluster://HOST:PORT,HOST:PORT" <<<"$ERR" && grep -q "RLOCK_URL=URL,URL" <<<"$ERR"'

# --- default URL is redis://127.0.0.1:6379 (only checked when nothing listens there)
if ! redis-cli -p 6379 PING >/dev/null 2>&1; then
  ( unset RLOCK_URL REDIS_URL; "$RLOCK" acquire Def >"$TEST_TMP/def.out" 2>"$TEST_TMP/def.err"; echo $? >"$TEST_TMP/def.rc" )
  RC=$(cat "$TEST_TMP/def.rc"); ERR=$(cat "$TEST_TMP/def.err")
  expect_rc 69 "no URL: default redis://127.0.0.1:6379 (nothing there)"
  check "default endpoint named in the message" grep -q '127.0.0.1:6379' <<<"$ERR"
fi

finish
