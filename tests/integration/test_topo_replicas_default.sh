#!/usr/bin/env bash
# Issue 24: acquire and renew wait for one replica's acknowledgement BY DEFAULT when
# the primary has replicas (INFO replication's connected_slaves, asked with the
# connection's HELLO), within a tenth
# of the TTL (at most 1s); none within it: the acquisition is undone, exit 69.
#   (a) the replica's link blocked (the replica SIGSTOPped: still connected and
#       counted, it never acknowledges): a plain acquire is refused (69) and
#       leaves nothing, in every mode; --sync-replicas 0 / RLOCK_SYNC_REPLICAS=0
#       take it; a waiter retries within -w; status -v says which rule applies;
#       Redlock applies the rule per master (the quorum decides).
#   (d) a `run` whose replica stops acknowledging: its renewals are unconfirmed,
#       the lease clock stops CMD (76) before the last confirmed lease ends.
#   (b) the link up: plain acquires work, and a promotion right after the acquire
#       loses nothing: 20 trials of a manual promotion (REPLICAOF NO ONE on the
#       replica right after acquire returned: what a failover does to the data),
#       then 2 real Sentinel failovers (primary SIGKILLed right after acquire).
#   (b') the same right after the replica resynced (a full sync): nothing lost.
#   (e) Sentinel, the replica's PSYNC refused (the issue's setup): the primary has
#       no connected replica, the sentinels list one: plain acquire refused 4/4.
#   (c) a single server without replicas gets no WAIT at all (INFO commandstats).
# Figures (refused N/N, lost N/20) are printed for docs/safety.md, "Failovers".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
. "$(dirname "$0")/topology.sh"
on() { [ "$(ccli "$1" EXISTS "$2")" = 1 ]; }
online() { ccli "$1" INFO replication | tr -d '\r' | grep -q '^slave0:.*state=online'; }
# a write, then WAIT on the same connection (a fresh one's WAIT counts offset 0: always acked)
acks() { [ "$(printf 'SET probe 1\nWAIT 1 200\n' | ccli "${1:-$P2}" | tail -n 1)" = 1 ]; }
calls() { ccli "$1" INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$2:calls=\([0-9]*\),.*/\1/p"; }

# ------------------------------------------------ (c) no replicas: no WAIT
start_redis
U0="redis://127.0.0.1:$REDIS_PORT"
rcli CONFIG RESETSTAT >/dev/null
r -u "$U0" acquire C --ttl 2s
expect_rc 0 "no replicas: acquire C"
r -u "$U0" renew C --owner "$OUT" --ttl 2s
expect_rc 0 "no replicas: renew C"
r -u "$U0" release C --owner "$OUT"
r -u "$U0" run C2 --ttl 1s -- sleep 1.6 # renewals every ~333ms; INFO replication re-read after 1s
expect_rc 0 "no replicas: run C2 with renewals"
r -u "$U0" acquire M1 M2 --fair --ttl 2s
expect_rc 0 "no replicas: acquire M1 M2 --fair"
r -u "$U0" release M1 M2 --owner "$OUT"
r -u "$U0" acquire W -s --ttl 2s
expect_rc 0 "no replicas: acquire W -s"
r -u "$U0" acquire L --limit 2 --ttl 2s
expect_rc 0 "no replicas: acquire L --limit 2"
waits=$(calls "$REDIS_PORT" wait); infos=$(calls "$REDIS_PORT" info)
renews=$(calls "$REDIS_PORT" evalsha)
echo "  no replicas: cmdstat_wait calls=${waits:-0}, cmdstat_info calls=${infos:-0} (one per connection, with HELLO), evalsha calls=${renews:-0}"
check "a server without replicas gets no WAIT (cmdstat_wait calls=${waits:-0})" test "${waits:-0}" = 0

# ------------------------------------------------ (a) the replica's link blocked
P=$(free_port)
start_node "$P"
start_replica_of "$P"
R=$REPLICA_PORT
PU="redis://127.0.0.1:$P"
echo "  primary $P, replica $R"
# (its link says up before the primary has it online: until then a WAIT may time out)
wait_until 10 online "$P" || topo_die "the primary does not list its replica online"
# ... and it acknowledges writes (after a full sync it may still be loading);
# the link-up checks use a 10s lease: the default's 1s for the acknowledgement,
# as a user gets it, so a loaded machine's scheduling does not decide them.
wait_until 10 acks "$P" || echo "  the replica of $P does not acknowledge yet"

r -u "$PU" acquire A0 --ttl 10s
expect_rc 0 "link up: a plain acquire works"
r -u "$PU" --json acquire A1 --ttl 10s
check "link up: --json says replicas_acked 1 ($(jget "$OUT" replicas_acked 2>/dev/null))" \
  test "$(jget "$OUT" replicas_acked 2>/dev/null)" = 1
r -u "$PU" acquire RE --owner re --ttl 30s
expect_rc 0 "link up: acquire RE (to re-enter below)"

kill -STOP "${NODE_PID[$R]}"
refused=0
for i in 1 2 3 4; do
  t0=$(ms)
  r -u "$PU" acquire B$i --ttl 3s
  d=$(( $(ms) - t0 ))
  [ "$RC" = 69 ] && ! on "$P" B$i && refused=$((refused + 1))
  [ "$i" = 1 ] && { echo "  blocked: acquire B1 rc $RC in ${d}ms: $ERR"; check "it says why, once ($ERR)" one_err_line; }
done
echo "  FIGURE blocked link: plain acquire refused (69, nothing left) in $refused of 4"
check "blocked link: a plain acquire is refused with 69 and leaves nothing, 4 of 4 ($refused)" test "$refused" = 4
check "it names the way out (--sync-replicas 0)" grep -q -- '--sync-replicas 0' <<<"$ERR"
# every mode, several names, A and {A}:x (one hash slot), re-entry
i=0
for args in "--fair" "-s" "--write" "--limit 2" "Y1 Y2" "{Z}:x"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  r -u "$PU" acquire Z$i $args --ttl 2s --owner z
  expect_rc 69 "blocked link: acquire Z$i $args"
  [ "$RC" = 69 ] || echo "  $ERR"
done
# (a --limit semaphore keeps its permit count, like after any release: status says free)
left=$(for k in Z1 Z2 Z3 Z4 Z5 Z6 Y1 Y2 '{Z}:x'; do r -u "$PU" status "$k"; [ "$RC" = 1 ] || printf '%s(%s) ' "$k" "$RC"; done)
check "nothing held after the refused acquisitions (status not free: ${left:-none})" test -z "$left"
check "no fair queue left" test "$(ccli "$P" EXISTS 'redisson_lock_queue:{Z1}')" = 0
r -u "$PU" acquire RE --owner re --ttl 30s
expect_rc 69 "blocked link: re-entering RE is refused"
check "RE is still held once (count $(ccli "$P" HGET RE re))" test "$(ccli "$P" HGET RE re)" = 1
r -u "$PU" renew RE --owner re --ttl 30s
expect_rc 69 "blocked link: renew RE is not confirmed"
t0=$(ms)
r -u "$PU" -v acquire B9 --ttl 3s -w 1s
d=$(( $(ms) - t0 ))
expect_rc 69 "blocked link: a waiter (-w 1s) does not take it either"
tries=$(grep -c 'trying again' <<<"$ERR")
check "the waiter tried again within its -w ($tries retries in ${d}ms)" test "$tries" -ge 1
check "B9 left nothing" test "$(ccli "$P" EXISTS B9)" = 0
T=$TEST_TMP/waiter
bg "$T" -u "$PU" acquire B10 --ttl 3s -w 8s
sleep 0.8
kill -CONT "${NODE_PID[$R]}"
check "a waiter (-w 8s) takes it once the replica acknowledges again" wait_until 10 bg_done "$T"
check "... exit 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "... and the replica has it" wait_until 2 on "$R" B10
kill -STOP "${NODE_PID[$R]}"
# the ways out
r -u "$PU" acquire S0 --ttl 3s --sync-replicas 0
expect_rc 0 "blocked link: --sync-replicas 0 takes it"
RLOCK_SYNC_REPLICAS=0 r -u "$PU" acquire S1 --ttl 3s
expect_rc 0 "blocked link: RLOCK_SYNC_REPLICAS=0 takes it"
RLOCK_SYNC_REPLICAS=1/200ms r -u "$PU" acquire S2 --ttl 3s --sync-replicas 0
expect_rc 0 "--sync-replicas 0 wins over RLOCK_SYNC_REPLICAS"
RLOCK_SYNC_REPLICAS=bogus r -u "$PU" acquire S3
expect_rc 64 "RLOCK_SYNC_REPLICAS=bogus is a usage error"
r -u "$PU" -v status S0
check "status -v says which applies ($(grep 'replica sync' <<<"$ERR" | head -1))" grep -q 'replica sync: one replica' <<<"$ERR"
RLOCK_SYNC_REPLICAS=0 r -u "$PU" -v status S0
check "status -v with RLOCK_SYNC_REPLICAS=0 says it is off" grep -q 'replica sync: off (RLOCK_SYNC_REPLICAS=0)' <<<"$ERR"
r -u "$PU" -v status S0 --sync-replicas 2/50ms
check "status -v with --sync-replicas 2/50ms says so" grep -q 'replica sync: 2 replica acknowledgements within 50ms (--sync-replicas)' <<<"$ERR"

# Redlock: per master. Masters: P (replica blocked), P2 (replica blocked), M3 (none).
P2=$(free_port)
start_node "$P2"
start_replica_of "$P2"
R2=$REPLICA_PORT
wait_until 10 online "$P2" || topo_die "the primary $P2 does not list its replica online"
M3=$(free_port)
start_node "$M3"
RL=(-u "$PU" -u "redis://127.0.0.1:$P2" -u "redis://127.0.0.1:$M3")
kill -STOP "${NODE_PID[$R2]}"
r "${RL[@]}" acquire RL1 --ttl 3s
expect_rc 69 "Redlock, 2 of 3 masters with a blocked replica: no quorum"
check "Redlock: nothing left on any master" eval '[ "$(ccli "$P" EXISTS RL1)$(ccli "$P2" EXISTS RL1)$(ccli "$M3" EXISTS RL1)" = 000 ]'
kill -CONT "${NODE_PID[$R2]}"
t0=$(ms); wait_until 5 acks || echo "  the replica of $P2 does not acknowledge yet"
echo "  the replica of $P2 acknowledges again $(( $(ms) - t0 ))ms after SIGCONT"
r "${RL[@]}" acquire RL2 --ttl 3s
expect_rc 0 "Redlock, 1 of 3 with a blocked replica: quorum of 2"
check "Redlock: the master whose replica did not acknowledge has no RL2" test "$(ccli "$P" EXISTS RL2)" = 0
check "Redlock: the two others have it" eval '[ "$(ccli "$P2" EXISTS RL2)$(ccli "$M3" EXISTS RL2)" = 11 ]'
kill -CONT "${NODE_PID[$R]}"

# ------------------------------------------------ (d) run: the replica stops acknowledging
T=$TEST_TMP/run1
bg "$T" -u "$PU" run RD --ttl 3s -- sh -c 'echo $$ >"$1.sh.pid"; sleep 15; touch "$1.cmdend"' sh "$T"
cmd_pid=$(pid_of "$T.sh.pid")
check "RD is on the replica" wait_until 3 on "$R" RD
sleep 1.2 # at least one acknowledged renewal
t_cut=$(ms)
kill -STOP "${NODE_PID[$R]}"
expect_lost_run "$T" "$cmd_pid" "$t_cut" "the replica stopped acknowledging (renewals unconfirmed)"
check "stopped before the 3s lease of the last confirmed renewal could end (${LOST_MS}ms < 3000)" test "$LOST_MS" -lt 3000
sed 's/^/  run stderr: /' "$T.err" | head -n 3
kill -CONT "${NODE_PID[$R]}"
check "the replica catches up" wait_until 10 _link_up "$R"

# ------------------------------------------------ (b) link up: promotion right after acquire
lost=0
for i in $(seq 1 20); do
  r -u "$PU" acquire F$i --ttl 30s
  [ "$RC" = 0 ] || { fail "trial $i: acquire F$i rc $RC"; continue; }
  own=$OUT
  ccli "$R" REPLICAOF NO ONE >/dev/null # promoted: what a failover does to the data
  r -u "redis://127.0.0.1:$R" acquire F$i -n --owner second
  holder=$(ccli "$R" HGET F$i "$own")
  if [ "$RC" != 75 ] || [ "$holder" != 1 ]; then
    lost=$((lost + 1)); echo "  trial $i: LOST (second owner rc $RC, first owner's count on the new primary '$holder')"
  fi
  ccli "$R" REPLICAOF 127.0.0.1 "$P" >/dev/null
  wait_until 10 _link_up "$R" || { fail "trial $i: the replica did not reconnect"; break; }
  wait_until 10 online "$P" || { fail "trial $i: the primary does not list its replica online"; break; }
done
echo "  FIGURE link up, manual promotion right after acquire: lost $lost of 20"
check "link up: no lock lost in 20 promotions right after acquire ($lost lost)" test "$lost" = 0

# the replica just resynced (it diverged: a full sync; its link says up before the
# primary has it online): the default counts it (INFO replication's connected_slaves),
# so the acquire waits for its acknowledgement or is refused, never lost
lost=0; refused=0
for i in $(seq 1 10); do
  ccli "$R" REPLICAOF NO ONE >/dev/null; ccli "$R" SET "junk$i" x >/dev/null
  ccli "$R" REPLICAOF 127.0.0.1 "$P" >/dev/null
  wait_until 10 _link_up "$R" || { fail "sync trial $i: the replica did not reconnect"; break; }
  r -u "$PU" acquire H$i --ttl 30s
  if [ "$RC" = 0 ]; then
    own=$OUT
    ccli "$R" REPLICAOF NO ONE >/dev/null
    [ "$(ccli "$R" HGET H$i "$own")" = 1 ] || lost=$((lost + 1))
  else
    refused=$((refused + 1))
  fi
done
ccli "$R" REPLICAOF 127.0.0.1 "$P" >/dev/null
echo "  FIGURE replica just resynced, promotion right after acquire: lost $lost, refused $refused of 10"
check "a replica just resynced: nothing lost ($lost lost, $refused refused)" test "$lost" = 0

start_sentinel_set
# the issue's setup: the replica's link kept down by refusing its PSYNC (ACL on the
# primary, then its link cut). The primary then has no connected replica, but the
# sentinels still list it and could promote it: counted from SENTINEL SLAVES.
ccli "$PRIMARY_PORT" ACL SETUSER default -psync -sync >/dev/null
ccli "$PRIMARY_PORT" CLIENT KILL TYPE replica >/dev/null
nolink() { ! _link_up "$REPLICA_PORT" && ccli "$PRIMARY_PORT" INFO replication | tr -d '\r' | grep -qx 'connected_slaves:0'; }
check "the replica's link is down (PSYNC refused), the primary counts no replica" wait_until 5 nolink
refused=0
for i in 1 2 3 4; do
  r -u "$SENTINEL_URL" acquire K$i --ttl 3s
  [ "$RC" = 69 ] && [ "$(ccli "$PRIMARY_PORT" EXISTS K$i)" = 0 ] && refused=$((refused + 1))
done
echo "  FIGURE PSYNC refused, through Sentinel: plain acquire refused (69, nothing left) in $refused of 4"
check "PSYNC refused: a plain acquire through the sentinels is refused, 4 of 4 ($refused)" test "$refused" = 4
r -u "$SENTINEL_URL" acquire K9 --ttl 3s --sync-replicas 0
expect_rc 0 "PSYNC refused: --sync-replicas 0 takes it"
# PSYNC first, SYNC once the link is up: a replica whose PSYNC was refused retries
# at once with the old SYNC, and one attached by SYNC never acknowledges (Redis
# sends no REPLCONF ACK to a pre-PSYNC master), so WAIT and rlock's default would
# never count it (seen in 3 of 8 trials when both were lifted together).
ccli "$PRIMARY_PORT" ACL SETUSER default +psync >/dev/null
check "the replica syncs again" wait_until 15 sentinels_settled "$PRIMARY_PORT" "$REPLICA_PORT" good
ccli "$PRIMARY_PORT" ACL SETUSER default +sync >/dev/null
# ... and acknowledges writes (a full resync may still be loading it): until then
# the default refuses acquisitions, rightly, and the failovers below would not start
check "the replica acknowledges writes again" wait_until 15 acks "$PRIMARY_PORT"
acks "$PRIMARY_PORT" || {
  ccli "$PRIMARY_PORT" INFO replication | tr -d '\r' | grep -E '^(role|connected_slaves|slave0|master_repl_offset)' | sed 's/^/  primary: /'
  ccli "$REPLICA_PORT" INFO replication | tr -d '\r' | grep -E '^(role|master_port|master_link_status|master_sync_in_progress|slave_repl_offset)' | sed 's/^/  replica: /'
  printf 'SET probe 1\nWAIT 1 200\n' | ccli "$PRIMARY_PORT" | sed 's/^/  SET+WAIT: /'
}

# two real Sentinel failovers (primary SIGKILLed right after acquire)
lost=0
for i in 1 2; do
  OLD=$PRIMARY_PORT NEW=$REPLICA_PORT
  t0=$(ms)
  r -u "$SENTINEL_URL" acquire G$i --ttl 60s
  [ "$RC" = 0 ] || { fail "failover $i: acquire G$i rc $RC"; break; }
  own=$OUT
  kill -9 "${NODE_PID[$OLD]}"
  wait_until 20 all_sentinels_name "$NEW" || { fail "failover $i: the sentinels did not promote $NEW"; break; }
  echo "  failover $i: sentinels promoted $NEW $(( $(ms) - t0 ))ms after the acquire"
  r -u "$SENTINEL_URL" acquire G$i -n --owner second
  holder=$(ccli "$NEW" HGET G$i "$own")
  if [ "$RC" != 75 ] || [ "$holder" != 1 ]; then
    lost=$((lost + 1)); echo "  failover $i: LOST (second owner rc $RC, first owner's count '$holder')"
  fi
  [ "$i" = 2 ] && break
  start_node "$OLD" # back, empty: becomes the new primary's replica
  settle_after_failover "$NEW" "$OLD" || { fail "failover $i: the set did not settle"; break; }
  NEW=$SETTLED_PRIMARY OLD=$SETTLED_REPLICA
  wait_until 15 sentinels_settled "$NEW" "$OLD" good || { fail "failover $i: the replica is not good"; break; }
  wait_until 15 acks "$NEW" || { fail "failover $i: the new replica does not acknowledge writes"; break; }
  PRIMARY_PORT=$NEW REPLICA_PORT=$OLD
done
echo "  FIGURE link up, Sentinel failover right after acquire: lost $lost of 2"
check "Sentinel failovers right after acquire lose nothing ($lost lost)" test "$lost" = 0

finish
