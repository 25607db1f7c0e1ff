#!/usr/bin/env bash
# Issue 33: a Redis Cluster with replicas (3 primaries + 3 replicas, cluster-node-
# timeout 1s, on loopback) as safe as Sentinel. One cluster serves every case:
#   (a) a primary refuses its replica's link (ACL -psync -sync -replconf, CLIENT
#       KILL TYPE replica): it then counts no connected replica, but the cluster
#       still lists it and would promote it. A plain acquire (every mode, several
#       names, run) is refused with 69 and leaves nothing; doctor fails it; a
#       `run` whose replica is cut says "no replica confirmed the renewal" (76).
#   (b) redis-cluster://DEAD,N1,N2 (the first seed down) works for every
#       subcommand; every seed down is 69 naming each; -v lists the replicas.
#   (c) `run`'s final release after a crash failover (primary SIGKILLed while
#       CMD runs, not restarted before CMD ends) removes the lock from the new
#       primary.
#   (d) a crash failover right after an acquire loses no lock, FAILOVER_TRIALS
#       (default 20) times, round the three shards; a request to a primary that
#       is down names that primary, not the seed.
#   (e) a waiter whose slot's primary is SIGKILLed follows the failover and
#       takes the lock on the promoted replica once the lease ends (issue 42).
# Promises only (lock present / absent, exit codes), no latencies: the figures
# (failover times) are printed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
. "$(dirname "$0")/topology.sh"
CLUSTER_NODE_TIMEOUT=1000
start_cluster 1
wait_until 30 cluster_settled || topo_die "the cluster with replicas did not settle"
TRIALS=${FAILOVER_TRIALS:-20}
DEAD=$(free_port)
seeds() { local p out="redis-cluster://127.0.0.1:$DEAD"; for p in "$@"; do out+=",127.0.0.1:$p"; done; echo "$out"; }
URL=$(seeds "${CLUSTER_PORTS[@]}")
TO=(--connect-timeout 500ms --io-timeout 1s)
# on NAME: the primary serving NAME has the key; off NAME: it does not
on() { [ "$(ccli "$(node_of_name "$1")" EXISTS "$1")" = 1 ]; }
off() { [ "$(ccli "$(node_of_name "$1")" EXISTS "$1")" = 0 ]; }
# holds NAME OWNER: the primary serving NAME has OWNER's field in it
holds() { [ "$(ccli "$(node_of_name "$1")" HEXISTS "$1" "$2")" = 1 ]; }
# replica_has PORT KEY: the replica PORT has KEY (READONLY: it answers for its primary's slots)
replica_has() { [ "$(printf 'READONLY\nEXISTS %s\n' "$2" | ccli "$1" | tail -n 1)" = 1 ]; }
# replica_now PORT: the replica of the primary PORT, once the cluster lists one
# whose link to it is up (a node that just rejoined takes a moment).
replica_now() {
  local r
  r=$(replica_of "$1") && [ -n "$r" ] && _link_up "$r" &&
    ccli "$r" INFO replication | tr -d '\r' | grep -qx "master_port:$1" && echo "$r"
}
# name_on PORT PREFIX: a name whose slot the primary PORT serves
name_on() { name_on_port "$1" "$2" || topo_die "no name found for port $1"; }
# synced PORT: the primary PORT has its replica online and acknowledging
synced() { acks "$1" "$(name_on "$1" probe)"; }
settle() {
  wait_until 40 cluster_settled || { echo "  $(ccli "$(live_port)" CLUSTER NODES | awk '{print $2, $3, $4}' | paste -sd';')"; return 1; }
  local p; for p in $(primaries); do wait_until 15 synced "$p" || return 1; done
}
mapfile -t P < <(primaries)
echo "  primaries ${P[*]}; replicas $(for p in "${P[@]}"; do printf '%s ' "$(replica_of "$p")"; done)"

# ------------------------------------------------ (b) several seeds, the first down
r -v -u "$URL" acquire "$(name_on "${P[1]}" v)" --ttl 5s
expect_rc 0 "redis-cluster:// with the first seed down: acquire"
# (CLUSTER SLOTS of Redis 7 leaves out a replica whose replication offset is
# still 0, as on this new cluster: -v says so, and what rlock counts)
check "-v shows the slot map with what CLUSTER SLOTS says of replicas ($(grep -o 'slot map of.*' <<<"$ERR" | head -c 200))" \
  grep -Eq 'slot map of 3 primaries: 0-[0-9]+ 127.0.0.1:[0-9]+ \((replicas 127.0.0.1:[0-9]+|CLUSTER SLOTS lists no replica)\)' <<<"$ERR"
check "-v says how many replicas the cluster lists for the primary" \
  grep -q "1 in the cluster's view (CLUSTER NODES)" <<<"$ERR"
N=$(name_on "${P[2]}" seed)
r -u "$URL" acquire "$N" --ttl 30s
expect_rc 0 "first seed down: acquire $N"
OWN=$OUT
check "$N is on its primary ${P[2]}" holds "$N" "$OWN"
r -u "$URL" renew "$N" --owner "$OWN" --ttl 40s
expect_rc 0 "first seed down: renew"
r -u "$URL" status "$N"
expect_rc 0 "first seed down: status NAME (held)"
r -u "$URL" status
expect_rc 0 "first seed down: status (every primary scanned)"
check "status lists $N" grep -qw -- "$N" <<<"$OUT"
r -u "$URL" history "$N"
expect_rc 0 "first seed down: history"
r -u "$URL" release "$N" --owner "$OWN"
expect_rc 0 "first seed down: release"
check "$N is gone" off "$N"
r -u "$URL" acquire "$N" --ttl 30s
r -u "$URL" force-unlock "$N"
expect_rc 0 "first seed down: force-unlock"
check "$N is gone after force-unlock" off "$N"
r -u "$URL" run "$N" --ttl 2s -- sh -c 'sleep 1; echo "$RLOCK_URL"'
expect_rc 0 "first seed down: run (renewed once)"
check "CMD gets the redis-cluster:// URL ($OUT)" test "$OUT" = "$URL"
r -u "$URL" check "$N"
check "first seed down: check answers (rc $RC, not 3: $OUT)" test "$RC" -le 2
r -u "$URL" doctor
check "first seed down: doctor surveys the 3 primaries (rc $RC)" \
  eval '[ "$RC" -le 1 ] && [ "$(grep -c "replication:" <<<"$OUT")" -ge 3 ]'
check "... and finds no cut-off replica" eval '! grep -q "not connected" <<<"$OUT"'
r -u "$URL" acquire A1 A2 --fair --ttl 5s
expect_rc 0 "first seed down: two names, --fair"
r -u "$URL" release A1 A2 --fair --owner "$OUT"
expect_rc 0 "... released"
for args in "-s" "--write" "--limit 2"; do
  # shellcheck disable=SC2086
  r -u "$URL" acquire M $args --ttl 5s --owner m
  expect_rc 0 "first seed down: acquire $args"
  # shellcheck disable=SC2086
  r -u "$URL" release M $args --owner m
  expect_rc 0 "... released"
done
RLOCK_OWNER=re r -u "$URL" acquire "$N" --ttl 30s
RLOCK_OWNER=re r -u "$URL" run "$N" --ttl 2s -- sh -c '"$0" -u "$1" status "$RLOCK_NAME" >/dev/null' "$RLOCK" "$URL"
expect_rc 0 "first seed down: a run re-enters (RLOCK_OWNER), and CMD reaches the cluster through RLOCK_URL"
check "$N is held once again by its owner" test "$(ccli "$(node_of_name "$N")" HGET "$N" re)" = 1
r -u "$URL" -E 3 acquire "$N" -n
expect_rc 3 "first seed down: busy with -E 3"
r -u "$URL" release "$N" --owner re
ALL_DOWN="redis-cluster://127.0.0.1:$DEAD,127.0.0.1:$(free_port)"
r -u "$ALL_DOWN" "${TO[@]}" acquire X
expect_rc 69 "every seed down: 69"
check "it names each seed it tried ($ERR)" \
  eval 'grep -q "no node of the cluster answered (redis://127.0.0.1:$DEAD: cannot connect" <<<"$ERR" && grep -q "; redis://127.0.0.1:[0-9]*: cannot connect" <<<"$ERR"'
check "one line" one_err_line

# ------------------------------------------------ (a) a replica whose link the primary refuses
C=${P[0]}
CR=$(replica_of "$C")
nolink() { ! _link_up "$CR" && ccli "$C" INFO replication | tr -d '\r' | grep -qx 'connected_slaves:0'; }
cut_replica_link "$C"
check "the replica $CR of $C is cut off: the primary counts none" wait_until 10 nolink
check "... the cluster still lists it as $C's replica" test "$(replica_of "$C")" = "$CR"
refused=0
for i in 1 2 3 4; do
  n=$(name_on "$C" cut$i)
  r -u "$URL" acquire "$n" --ttl 5s
  [ "$RC" = 69 ] && off "$n" && refused=$((refused + 1))
  [ "$i" = 1 ] && { echo "  cut: acquire $n rc $RC: $ERR"; check "it says no replica acknowledged it on $C ($ERR)" grep -q "no replica acknowledged it on redis://127.0.0.1:$C" <<<"$ERR"; }
done
echo "  FIGURE cut-off replica (Cluster): plain acquire refused (69, nothing left) in $refused of 4"
check "cut-off replica: a plain acquire is refused with 69 and leaves nothing, 4 of 4 ($refused)" test "$refused" = 4
i=0
for args in "--fair" "-s" "--write" "--limit 2"; do
  i=$((i + 1)); n=$(name_on "$C" mode$i)
  # shellcheck disable=SC2086
  r -u "$URL" acquire "$n" $args --ttl 3s
  expect_rc 69 "cut-off replica: acquire $args"
  check "... leaves no lock" eval 'r -u "$URL" status "$n"; [ "$RC" = 1 ]'
done
n=$(name_on "$C" pair)
r -u "$URL" acquire "{$n}:x" "{$n}:y" --ttl 3s
expect_rc 69 "cut-off replica: two names of one slot"
r -u "$URL" run "$n" --ttl 3s -- touch "$TEST_TMP/ran"
expect_rc 69 "cut-off replica: run refuses before CMD"
check "... CMD never ran" test ! -e "$TEST_TMP/ran"
r -u "redis://127.0.0.1:$C" acquire "$n" --ttl 3s
expect_rc 69 "cut-off replica: a plain redis:// URL of the primary itself, too"
check "nothing left" off "$n"
r -u "$URL" acquire "$n" --ttl 3s --sync-replicas 0
expect_rc 0 "cut-off replica: --sync-replicas 0 takes it (the way out, said in the error)"
r -u "$URL" doctor
expect_rc 1 "doctor fails"
check "doctor names the replica listed but not connected" \
  grep -q "unsafe .*127.0.0.1:$C replication: replica 127.0.0.1:$CR listed by the cluster, not connected" <<<"$OUT"
restore_replica_link "$C"
check "the replica is back" wait_until 15 synced "$C"

# a run whose replica is cut while it holds: its renewals are unconfirmed
n=$(name_on "$C" runcut)
T=$TEST_TMP/runcut
bg "$T" -u "$URL" run "$n" --ttl 3s -- sh -c 'echo $$ >"$1.sh.pid"; sleep 15; touch "$1.cmdend"' sh "$T"
check "the run holds $n" wait_until 5 on "$n"
sleep 1.2 # one confirmed renewal
t_cut=$(ms)
cut_replica_link "$C"
check "the run ends" wait_until 12 bg_done "$T"
echo "  run exited $(( $(bg_t "$T") - t_cut ))ms after the cut"
check "run exits 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "CMD was stopped before its end" test ! -e "$T.cmdend"
check "it says no replica confirmed the renewal ($(tail -n 1 "$T.err"))" \
  grep -q 'no replica confirmed the renewal in time: the lock may still be held on the primary' "$T.err"
restore_replica_link "$C"
check "the replica is back" wait_until 15 synced "$C"

# ------------------------------------------------ (c) run's release after a crash failover
n=$(name_on "${P[1]}" rel)
OLD=${P[1]} NEW=$(replica_now "${P[1]}")
T=$TEST_TMP/rel
# (a redis:// URL of another primary: the release follows the failover whatever the URL form)
bg "$T" -u "redis://127.0.0.1:${P[2]}" run "$n" --ttl 30s -- sh -c 'while [ ! -e "$1.go" ]; do sleep 0.05; done' sh "$T"
check "the run holds $n on $OLD" wait_until 5 on "$n"
check "... and its replica $NEW has it" wait_until 5 replica_has "$NEW" "$n"
t0=$(ms)
kill -9 "${NODE_PID[$OLD]}"
promoted() { [ "$(role_of "$NEW")" = master ] && [ "$(node_of_name "$n")" = "$NEW" ]; }
check "the replica $NEW is promoted" wait_until 30 promoted
echo "  FIGURE crash failover: $NEW serves $n $(( $(ms) - t0 ))ms after the SIGKILL of $OLD"
check "the new primary has the run's lock" test "$(ccli "$NEW" EXISTS "$n")" = 1
touch "$T.go"
check "the run ends" wait_until 15 bg_done "$T"
check "run exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "the release reached the new primary: $n is gone from $NEW" test "$(ccli "$NEW" EXISTS "$n")" = 0
check "no 'could not release' ($(head -c 300 "$T.err"))" eval '! grep -q "could not release" "$T.err"'
start_cluster_node "$OLD"
check "the old primary rejoins as a replica" wait_until 20 eval '[ "$(role_of "$OLD")" = slave ]'
settle || fail "the cluster did not settle after the rejoin"

# ------------------------------------------------ (e) a waiter follows a crash failover (issue 42)
# A `run -w` waiting through redis-cluster:// seeds for a lock whose primary is
# SIGKILLed: its subscription breaks, its SUBSCRIBE to the dead node fails and
# makes the slot map stale, so it subscribes on the promoted replica and takes
# the lock there once the holder's (replicated) lease ends, not retrying the
# dead node until its -w runs out.
mapfile -t P < <(primaries)
OLD=${P[0]}
wait_until 15 synced "$OLD" || fail "(e): $OLD's replica does not acknowledge"
NEW=
wait_until 10 eval 'NEW=$(replica_now "$OLD")' || fail "(e): no replica of $OLD is listed with its link up"
n=$(name_on "$OLD" wf)
r -u "$URL" acquire "$n" --ttl 6s --owner holder
expect_rc 0 "(e) the holder takes $n on $OLD for 6s"
T=$TEST_TMP/wf
bg "$T" -u "$URL" "${TO[@]}" run "$n" -w 40s -- sh -c 'date +%s%3N >"$0.start"' "$T"
subscribed_on() { [ -n "$(ccli "$1" PUBSUB SHARDCHANNELS "redisson_lock__channel:{$n}*")$(ccli "$1" PUBSUB CHANNELS "redisson_lock__channel:{$n}*")" ]; }
check "(e) the waiter listens on $OLD" wait_until 10 subscribed_on "$OLD"
check "(e) ... and $NEW has the lock" wait_until 5 replica_has "$NEW" "$n"
sleep 0.3
left=$(ccli "$OLD" PTTL "$n")
t_end=$(( $(ms) + left ))
kill -9 "${NODE_PID[$OLD]}"
check "(e) the replica $NEW is promoted" wait_until 30 promoted
t_promoted=$(ms)
waiter_after_failover "$T" "$t_end" "$t_promoted" "(e) Cluster, $n on $NEW"
start_cluster_node "$OLD"
check "(e) the old primary rejoins as a replica" wait_until 20 eval '[ "$(role_of "$OLD")" = slave ]'
settle || fail "the cluster did not settle after (e)"

# ------------------------------------------------ (d) crash failover right after an acquire
lost=0 named=0 tried=0
for i in $(seq 1 "$TRIALS"); do
  mapfile -t P < <(primaries)
  OLD=${P[$(( i % 3 ))]}
  wait_until 15 synced "$OLD" || { fail "trial $i: $OLD's replica does not acknowledge"; settle; continue; }
  NEW=
  wait_until 10 eval 'NEW=$(replica_now "$OLD")' || { fail "trial $i: no replica of $OLD is listed with its link up"; continue; }
  n=$(name_on "$OLD" f$i)
  m=$(name_on "$OLD" g$i)
  r -u "$URL" acquire "$n" --ttl 60s
  [ "$RC" = 0 ] || { fail "trial $i: acquire $n rc $RC: $ERR"; continue; }
  own=$OUT
  kill -9 "${NODE_PID[$OLD]}"
  t0=$(ms)
  # at once, before the failover: a request for the dead primary's slot names it
  r -u "$URL" "${TO[@]}" acquire "$m" -n --ttl 5s
  if [ "$RC" = 69 ]; then
    tried=$((tried + 1))
    grep -q "redis://127.0.0.1:$OLD: " <<<"$ERR" && named=$((named + 1)) || echo "  trial $i: 69 without naming $OLD: $ERR"
  fi
  if ! wait_until 30 eval '[ "$(node_of_name "$n")" = "$NEW" ] && [ "$(role_of "$NEW")" = master ]'; then
    fail "trial $i: $NEW was not promoted"; break
  fi
  d=$(( $(ms) - t0 ))
  r -u "$URL" acquire "$n" -n --owner second --ttl 5s
  holder=$(ccli "$NEW" HGET "$n" "$own")
  if [ "$RC" != 75 ] || [ "$holder" != 1 ]; then
    lost=$((lost + 1)); echo "  trial $i: LOST (second owner rc $RC, first owner's count on the new primary '$holder')"
  fi
  echo "  trial $i: $OLD SIGKILLed right after the acquire, $NEW promoted after ${d}ms, lock $([ "$holder" = 1 ] && echo kept || echo LOST)"
  ccli "$NEW" DEL "$n" "$m" >/dev/null
  start_cluster_node "$OLD"
  wait_until 20 eval '[ "$(role_of "$OLD")" = slave ]' || { fail "trial $i: $OLD did not rejoin as a replica"; break; }
done
settle || fail "the cluster did not settle after the trials"
echo "  FIGURE crash failover right after acquire (Cluster, default replica sync): lost $lost of $TRIALS"
check "crash failovers right after acquire lose nothing ($lost of $TRIALS lost)" test "$lost" = 0
echo "  FIGURE a request for the dead primary's slot before the failover: 69 in $tried, naming the primary in $named"
check "a request for a dead primary's slot names that primary ($named of $tried)" \
  eval '[ "$tried" -ge 1 ] && [ "$named" = "$tried" ]'

finish
