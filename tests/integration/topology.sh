# Redis topologies for the test_topo_*.sh scenarios (sourced after lib.sh):
# a 3-primary cluster, a primary + replica watched by 3 sentinels, a primary
# with one replica. Every server runs in (and has --dir / `dir`) a directory
# under $TEST_TMP, so lib.sh's cleanup kills it; its pid is in _pids as well.
# Every wait here is bounded; a topology that does not come up ends the test
# with "FAIL: ...".

# ccli PORT ARGS...: redis-cli against one loopback server (no redirections).
ccli() { local p=$1; shift; redis-cli -h 127.0.0.1 -p "$p" "$@"; }
# ccli_ask PORT ARGS...: the same, preceded by ASKING on the same connection
# (reads a key of a slot the node is importing); prints the command's reply only.
ccli_ask() {
  local p=$1; shift
  local a line="ASKING"$'\n'
  for a in "$@"; do a=${a//\\/\\\\}; line+="\"${a//\"/\\\"}\" "; done
  printf '%s\n' "$line" | redis-cli -h 127.0.0.1 -p "$p" 2>/dev/null | tail -n 1
}

topo_die() {
  echo "FAIL: $*"
  local f
  for f in "$TEST_TMP"/*/log; do [ -e "$f" ] && { echo "  --- $f"; tail -n 5 "$f"; }; done
  exit 1
}

# _topo_start DIR ARGS...: redis-server ARGS... started from DIR (its cwd),
# logging to DIR/log. Sets TOPO_PID.
_topo_start() {
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && exec redis-server "$@" >>"$dir/log" 2>&1) &
  TOPO_PID=$!
  _pids+=("$TOPO_PID")
}
_topo_pong() { [ "$(ccli "$1" PING 2>/dev/null)" = PONG ]; }
# start_node PORT [ARGS...]: a plain server on PORT in $TEST_TMP/node-PORT; a full
# sync to a replica starts at once (the default waits 5s for more replicas).
# Sets TOPO_PID; NODE_PID[PORT] keeps it.
declare -gA NODE_PID=()
start_node() {
  local port=$1; shift
  local dir="$TEST_TMP/node-$port"
  _topo_start "$dir" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --repl-diskless-sync-delay 0 "$@"
  NODE_PID[$port]=$TOPO_PID
  wait_until 5 _topo_pong "$port" || topo_die "redis-server did not start on port $port"
}

# ---------------------------------------------------------------- cluster
# start_cluster: 3 primaries, no replicas, slots spread by redis-cli --cluster
# create. Sets CLUSTER_PORTS (array), CLUSTER_ID[PORT] (node ids), CLUSTER_URL
# (the first node).
declare -gA CLUSTER_ID=()
CLUSTER_PORTS=()
_cluster_ok() {
  local p
  for p in "${CLUSTER_PORTS[@]}"; do
    ccli "$p" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    # every node knows all three primaries with their slots
    [ "$(ccli "$p" CLUSTER NODES 2>/dev/null | awk '$3 ~ /master/ && NF >= 9' | wc -l)" = 3 ] || return 1
  done
}
# free_cluster_port: a free port P <= 55535 whose bus port P+10000 is free too.
free_cluster_port() {
  python3 -c 'import random, socket
for _ in range(200):
    p = random.randint(20000, 55000)
    try:
        for q in (p, p + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
    except OSError:
        continue
    print(p); break'
}
start_cluster() {
  local p i
  CLUSTER_PORTS=()
  for i in 1 2 3; do
    p=$(free_cluster_port)
    [ -n "$p" ] || topo_die "no free port pair for a cluster node"
    start_node "$p" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000
    CLUSTER_PORTS+=("$p")
  done
  redis-cli --cluster create "${CLUSTER_PORTS[@]/#/127.0.0.1:}" --cluster-yes >"$TEST_TMP/cluster-create.log" 2>&1 ||
    { cat "$TEST_TMP/cluster-create.log"; topo_die "redis-cli --cluster create failed"; }
  wait_until 20 _cluster_ok || topo_die "the cluster did not reach cluster_state:ok"
  for p in "${CLUSTER_PORTS[@]}"; do CLUSTER_ID[$p]=$(ccli "$p" CLUSTER MYID); done
  export CLUSTER_URL="redis://127.0.0.1:${CLUSTER_PORTS[0]}"
  echo "  cluster: ports ${CLUSTER_PORTS[*]}"
}
# port_of_id ID
port_of_id() { local p; for p in "${CLUSTER_PORTS[@]}"; do [ "${CLUSTER_ID[$p]}" = "$1" ] && echo "$p" && return 0; done; return 1; }
# slot_of KEY
slot_of() { ccli "${CLUSTER_PORTS[0]}" CLUSTER KEYSLOT "$1"; }
# node_of_slot SLOT [VIEW_PORT]: the port of the primary serving SLOT, as the node
# VIEW_PORT (default: the first) sees it (CLUSTER SHARDS would do as well).
node_of_slot() {
  local slot=$1 view=${2:-${CLUSTER_PORTS[0]}} id
  id=$(ccli "$view" CLUSTER NODES | awk -v s="$slot" '
    $3 ~ /master/ { for (i = 9; i <= NF; i++) { if ($i ~ /^\[/) continue
      n = split($i, a, "-"); lo = a[1]; hi = (n > 1 ? a[2] : a[1])
      if (s + 0 >= lo + 0 && s + 0 <= hi + 0) { print $1; exit } } }')
  [ -n "$id" ] && port_of_id "$id"
}
# node_of_name NAME: the port of the primary serving the lock hash NAME.
node_of_name() { node_of_slot "$(slot_of "$1")"; }
# name_on_port PORT PREFIX: the first PREFIX1, PREFIX2, ... whose slot PORT serves.
name_on_port() {
  local port=$1 prefix=$2 i
  for i in $(seq 1 300); do
    [ "$(node_of_name "$prefix$i")" = "$port" ] && { echo "$prefix$i"; return 0; }
  done
  return 1
}
# other_port PORT: a cluster node that is not PORT (the next one).
other_port() {
  local i n=${#CLUSTER_PORTS[@]}
  for i in $(seq 0 $((n - 1))); do
    [ "${CLUSTER_PORTS[$i]}" = "$1" ] && { echo "${CLUSTER_PORTS[$(((i + 1) % n))]}"; return 0; }
  done
  return 1
}
# Slot migration in the steps of redis-cli --cluster reshard:
# slot_begin_migration SLOT FROM TO: TO IMPORTING from FROM, FROM MIGRATING to TO.
slot_begin_migration() {
  local slot=$1 from=$2 to=$3
  [ "$(ccli "$to" CLUSTER SETSLOT "$slot" IMPORTING "${CLUSTER_ID[$from]}")" = OK ] || return 1
  [ "$(ccli "$from" CLUSTER SETSLOT "$slot" MIGRATING "${CLUSTER_ID[$to]}")" = OK ]
}
# slot_move_keys SLOT FROM TO: every key of SLOT moved from FROM to TO by one
# MIGRATE ... KEYS call (prints the keys moved, one per line, in MIGRATED_KEYS).
MIGRATED_KEYS=()
slot_move_keys() {
  local slot=$1 from=$2 to=$3 reply
  mapfile -t MIGRATED_KEYS < <(ccli "$from" CLUSTER GETKEYSINSLOT "$slot" 1000)
  [ "${#MIGRATED_KEYS[@]}" -gt 0 ] || return 0
  reply=$(ccli "$from" MIGRATE 127.0.0.1 "$to" "" 0 5000 KEYS "${MIGRATED_KEYS[@]}")
  [ "$reply" = OK ] || { echo "  MIGRATE: $reply"; return 1; }
}
# slot_assign SLOT TO: CLUSTER SETSLOT SLOT NODE TO on every node (TO first).
slot_assign() {
  local slot=$1 to=$2 p
  ccli "$to" CLUSTER SETSLOT "$slot" NODE "${CLUSTER_ID[$to]}" >/dev/null || return 1
  for p in "${CLUSTER_PORTS[@]}"; do
    [ "$p" = "$to" ] && continue
    [ "$(ccli "$p" CLUSTER SETSLOT "$slot" NODE "${CLUSTER_ID[$to]}")" = OK ] || return 1
  done
}
migrate_slot() { slot_begin_migration "$@" && slot_move_keys "$@" && slot_assign "$1" "$3"; }

# ---------------------------------------------------------------- replicas
# start_replica_of PRIMARY_PORT: a replica on a free port, waiting until its
# link is up. Sets REPLICA_PORT.
_link_up() { ccli "$1" INFO replication 2>/dev/null | grep -q '^master_link_status:up'; }
start_replica_of() {
  REPLICA_PORT=$(free_port)
  start_node "$REPLICA_PORT" --replicaof 127.0.0.1 "$1"
  wait_until 10 _link_up "$REPLICA_PORT" || topo_die "the replica on $REPLICA_PORT did not sync with $1"
}
# role_of PORT: master / slave
role_of() { ccli "$1" INFO replication 2>/dev/null | tr -d '\r' | sed -n 's/^role://p'; }

# ---------------------------------------------------------------- sentinel
# start_sentinel_set: a primary, one replica, 3 sentinels monitoring "mymaster"
# (quorum 2). Sets PRIMARY_PORT, REPLICA_PORT, SENTINEL_PORTS, SENTINEL_PIDS,
# SENTINEL_URL.
SENTINEL_PORTS=()
SENTINEL_PIDS=()
start_sentinel_set() {
  local s i dir
  PRIMARY_PORT=$(free_port)
  start_node "$PRIMARY_PORT"
  start_replica_of "$PRIMARY_PORT"
  SENTINEL_PORTS=()
  SENTINEL_PIDS=()
  for i in 1 2 3; do
    s=$(free_port)
    dir="$TEST_TMP/sentinel-$s"
    mkdir -p "$dir"
    cat >"$dir/sentinel.conf" <<EOF
port $s
bind 127.0.0.1
dir $dir
sentinel resolve-hostnames no
sentinel monitor mymaster 127.0.0.1 $PRIMARY_PORT 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 5000
EOF
    _topo_start "$dir" "$dir/sentinel.conf" --sentinel
    SENTINEL_PIDS+=("$TOPO_PID")
    SENTINEL_PORTS+=("$s")
    wait_until 5 _topo_pong "$s" || topo_die "sentinel did not start on port $s"
  done
  export SENTINEL_URL="redis-sentinel://127.0.0.1:${SENTINEL_PORTS[0]},127.0.0.1:${SENTINEL_PORTS[1]},127.0.0.1:${SENTINEL_PORTS[2]}/mymaster"
  wait_until 20 sentinels_settled "$PRIMARY_PORT" "$REPLICA_PORT" good ||
    topo_die "the sentinels did not discover each other and the replica"
  echo "  sentinel: primary $PRIMARY_PORT, replica $REPLICA_PORT, sentinels ${SENTINEL_PORTS[*]}"
}
# sentinel_field PORT FIELD: a field of SENTINEL MASTER mymaster.
sentinel_field() { ccli "$1" SENTINEL MASTER mymaster 2>/dev/null | awk -v f="$2" 'prev == f { print; exit } { prev = $0 }'; }
# current_primary [SENTINEL_PORT]: the primary's port as a sentinel reports it.
current_primary() { ccli "${1:-${SENTINEL_PORTS[0]}}" SENTINEL GET-MASTER-ADDR-BY-NAME mymaster 2>/dev/null | sed -n 2p; }
# _replica_listed SENTINEL PORT: the sentinel lists PORT as a replica of mymaster
# with no other flag (not down, not disconnected).
_replica_listed() {
  local out
  out=$(ccli "$1" SENTINEL REPLICAS mymaster 2>/dev/null | paste -sd' ')
  [[ " $out " == *" port $2 "*" flags slave "* ]]
}
# _replica_good SENTINEL PORT: ... and has seen it replicating (link ok).
_replica_good() {
  local out
  out=$(ccli "$1" SENTINEL REPLICAS mymaster 2>/dev/null | paste -sd' ')
  [[ " $out " == *" port $2 "*" flags slave "*" master-link-status ok "* ]]
}
# sentinels_settled PRIMARY REPLICA [good]: PRIMARY is a master and REPLICA its
# replica with the link up; all three sentinels name PRIMARY, have no failover in
# progress, see the two other sentinels, and list REPLICA as a replica (with
# "good": one they have seen replicating, which takes up to 10s after a role change).
sentinels_settled() {
  local s
  [ "$(role_of "$1")" = master ] && [ "$(role_of "$2")" = slave ] && _link_up "$2" || return 1
  ccli "$2" INFO replication | tr -d '\r' | grep -qx "master_port:$1" || return 1
  for s in "${SENTINEL_PORTS[@]}"; do
    [ "$(current_primary "$s")" = "$1" ] || return 1
    [ "$(sentinel_field "$s" num-other-sentinels)" = 2 ] || return 1
    [ "$(sentinel_field "$s" flags)" = master ] || return 1
    if [ "${3:-}" = good ]; then _replica_good "$s" "$2" || return 1
    else _replica_listed "$s" "$2" || return 1; fi
  done
}
# all_sentinels_name PORT: every sentinel gives PORT as the primary's address.
all_sentinels_name() {
  local s
  for s in "${SENTINEL_PORTS[@]}"; do [ "$(current_primary "$s")" = "$1" ] || return 1; done
}
# settle_after_failover NEW OLD: once the sentinels name NEW, make OLD its replica
# at once (REPLICAOF, as the sentinels would do some 10s later) and wait until the
# set is settled. Bounded: 20s.
settle_after_failover() {
  wait_until 10 all_sentinels_name "$1" || return 1
  [ "$(role_of "$2")" = slave ] || ccli "$2" REPLICAOF 127.0.0.1 "$1" >/dev/null
  wait_until 15 sentinels_settled "$1" "$2"
}
# sentinel_failover: SENTINEL FAILOVER mymaster via the first sentinel that
# accepts it (bounded retries on NOGOODSLAVE / INPROG); prints the last refusal.
sentinel_failover() {
  local i s reply
  for i in $(seq 1 20); do
    for s in "${SENTINEL_PORTS[@]}"; do
      reply=$(ccli "$s" SENTINEL FAILOVER mymaster 2>&1)
      [ "$reply" = OK ] && return 0
    done
    sleep 0.25
  done
  echo "$reply"
  return 1
}

# expect_lost_run T CMD_PID SINCE_MS WHY: the background run T (bg) ends with 76
# after the lock was lost (WHY, for the messages): CMD (pid CMD_PID, which would
# have touched T.cmdend at its natural end) was stopped and is gone. Sets LOST_MS
# (ms from SINCE_MS to the run's exit).
expect_lost_run() {
  local t=$1 cmd_pid=$2 since=$3 why=$4
  check "the run ends" wait_until 12 bg_done "$t"
  LOST_MS=$(( $(bg_t "$t") - since )); echo "  run exited ${LOST_MS}ms after $why"
  check "run exits 76: $why (got $(bg_rc "$t"))" test "$(bg_rc "$t")" = 76
  check "CMD was stopped before its end" test ! -e "$t.cmdend"
  check "CMD is gone" wait_until 2 dead "$cmd_pid"
}
