#!/usr/bin/env bash
# Redlock counts each server once (issue 19, defect 6). A master is the server
# it is, not the text of its URL: `redis://127.0.0.1:P` and `redis://localhost:P`
# (one address once resolved), `/1` and `/2` of one server (db numbers), and a
# unix socket and TCP of one server (the same run_id, learnt with the first
# request's HELLO) are one server named twice: a usage error (64) with one clear
# line, nothing left on the server, CMD not run. Before the fix they were
# granted "2 of 3" with the third master dead, and `doctor` called it safe.
# Also: `doctor` no longer says of each Redlock master "one server holds every lock".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
TO=(--connect-timeout 500ms --io-timeout 500ms)

start_masters 2
P0=${MASTER_PORTS[0]}
DEAD=$(free_port)
ran=$TEST_TMP/ran
nothing_on_0() { [ "$(mcli 0 DBSIZE)" = 0 ] && [ "$(mcli 0 -n 1 DBSIZE)" = 0 ] && [ "$(mcli 0 -n 2 DBSIZE)" = 0 ]; }
same_server_error() { [ "$RC" = 64 ] && one_err_line && grep -q "are the same server" <<<"$ERR"; }

# ---- two spellings of one address
r "${TO[@]}" -u "redis://127.0.0.1:$P0" -u "redis://localhost:$P0" -u "redis://127.0.0.1:$DEAD" acquire Q
expect_rc 64 "127.0.0.1:P and localhost:P (and a dead one): the same server twice"
check "one line that says so" same_server_error
echo "  $ERR"
check "nothing was written on the server" nothing_on_0
r "${TO[@]}" -u "redis://LOCALHOST:$P0" -u "redis://127.0.0.1:$P0" -u "$(master_url 1)" run --if-unavailable run Q -- touch "$ran"
expect_rc 64 "run --if-unavailable run with LOCALHOST:P and 127.0.0.1:P: a usage error, not unavailable"
check "CMD did not run" test ! -e "$ran"
RLOCK_URL="redis://127.0.0.1:$P0,redis://localhost:$P0,$(master_url 1)" r "${TO[@]}" status
expect_rc 64 "RLOCK_URL=127.0.0.1:P,localhost:P,...: status refuses too"
r "${TO[@]}" -u "redis://127.0.0.1:$P0" -u "redis://localhost:$P0" -u "$(master_url 1)" doctor
expect_rc 64 "doctor refuses the same server twice (it called it safe)"

# ---- two databases of one server
r "${TO[@]}" -u "redis://127.0.0.1:$P0/1" -u "redis://127.0.0.1:$P0/2" -u "$(master_url 1)" acquire Q
expect_rc 64 "/1 and /2 of one server: the same server twice"
check "one line that says so" same_server_error
echo "  $ERR"
check "nothing was written in db 1 or 2" nothing_on_0
r "${TO[@]}" -u "redis://127.0.0.1:$P0/1" -u "redis://localhost:$P0/2" -u "$(master_url 1)" acquire Q R
expect_rc 64 "/1 and localhost/2, two names: still the same server (64)"
check "nothing was written in db 1 or 2" nothing_on_0

# ---- a unix socket and TCP of one server: only its run_id tells
start_redis # REDIS_PORT, REDIS_SOCK (a server of lib.sh, with a unix socket)
U=(-u "unix://$REDIS_SOCK" -u "redis://127.0.0.1:$REDIS_PORT" -u "$(master_url 1)")
r "${TO[@]}" "${U[@]}" acquire Q --ttl 30s
expect_rc 64 "unix socket and TCP of one server: the same server (its run_id)"
check "one line that says so, naming the run_id" eval 'same_server_error && grep -q "run_id" <<<"$ERR"'
echo "  $ERR"
check "what the round took there was given back" key_gone Q
check "and on the other master" eval '[ "$(mcli 1 EXISTS Q)" = 0 ]'
r "${TO[@]}" "${U[@]}" run Q -- touch "$ran"
expect_rc 64 "run over them: 64"
check "CMD did not run" test ! -e "$ran"
check "nothing left" key_gone Q
r "${TO[@]}" "${U[@]}" doctor
expect_rc 64 "doctor over them: 64 (INFO's run_id)"
check "doctor says why" eval 'grep -q "are the same server" <<<"$ERR"'
r "${TO[@]}" "${U[@]}" status Q
expect_rc 64 "status over them: 64"

# ---- independent masters still work; doctor's words about a master
r "${TO[@]}" -u "$(master_url 0)" -u "$(master_url 1)" -u "redis://127.0.0.1:$REDIS_PORT" acquire Q --ttl 5s
expect_rc 0 "three independent masters: granted"
r "${TO[@]}" -u "$(master_url 0)" -u "$(master_url 1)" -u "redis://127.0.0.1:$REDIS_PORT" doctor
check "doctor ran over three masters (rc $RC: 0 or 1)" test "$RC" = 0 -o "$RC" = 1
check "doctor does not say 'one server holds every lock' of a Redlock master" \
  eval '! grep -q "one server holds every lock" <<<"$OUT"'
check "doctor says a master is one vote of a majority" eval 'grep -q "majority" <<<"$OUT"'
finish
