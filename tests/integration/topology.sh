# Redis topologies for the test_topo_*.sh scenarios (sourced after lib.sh):
# a 3-primary cluster, a primary + replica watched by 3 sentinels, a primary
# with one replica. Every server runs in (and has --dir / `dir`) a directory
# under $TEST_TMP, so lib.sh's cleanup kills it; its pid is in _pids as well.
# Every wait here is bounded; a topology that does not come up ends the test
# with "FAIL: ...".

# TLS (test_conn_tls.sh): after topo_use_tls CA_FILE CERT_FILE KEY_FILE, every
# node and sentinel started listens with TLS only (its port is the TLS port;
# replication and the cluster bus use TLS too), ccli speaks TLS, and the URLs
# made here are rediss:// and rediss-sentinel://.
TOPO_SERVER_TLS=()
TOPO_CLI_TLS=()
TOPO_SCHEME=redis
topo_use_tls() {
  TOPO_SERVER_TLS=(--tls-cert-file "$2" --tls-key-file "$3" --tls-ca-cert-file "$1" --tls-auth-clients no
                   --tls-replication yes --tls-cluster yes)
  TOPO_CLI_TLS=(--tls --cacert "$1")
  TOPO_SCHEME=rediss
}
# _topo_listen PORT: sets TOPO_LISTEN, the redis-server arguments to listen on PORT.
_topo_listen() {
  if [ ${#TOPO_SERVER_TLS[@]} -gt 0 ]; then
    TOPO_LISTEN=(--port 0 --tls-port "$1" "${TOPO_SERVER_TLS[@]}")
  else
    TOPO_LISTEN=(--port "$1")
  fi
}

# ccli PORT ARGS...: redis-cli against one loopback server (no redirections).
ccli() { local p=$1; shift; redis-cli -h 127.0.0.1 -p "$p" "${TOPO_CLI_TLS[@]}" "$@"; }
# ccli_ask PORT ARGS...: the same, preceded by ASKING on the same connection
# (reads a key of a slot the node is importing); prints the command's reply only.
ccli_ask() {
  local p=$1; shift
  local a line="ASKING"$'\n'
  for a in "$@"; do a=${a//\\/\\\\}; line+="\"${a//\"/\\\"}\" "; done
  printf '%s\n' "$line" | redis-cli -h 127.0.0.1 -p "$p" "${TOPO_CLI_TLS[@]}" 2>/dev/null | tail -n 1
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
  _topo_listen "$port"
  _topo_start "$dir" "${TOPO_LISTEN[@]}" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --repl-diskless-sync-delay 0 "$@"
  NODE_PID[$port]=$TOPO_PID
  wait_until 5 _topo_pong "$port" || topo_die "redis-server did not start on port $port"
}

# ---------------------------------------------------------------- cluster
# start_cluster [REPLICAS]: 3 primaries (and REPLICAS replicas of each, default
# 0), slots spread by redis-cli --cluster create. CLUSTER_NODE_TIMEOUT (ms,
# default 2000) is each node's cluster-node-timeout. Sets CLUSTER_PORTS (array:
# the primaries first, as created), CLUSTER_ID[PORT] (node ids), CLUSTER_URL
# (the first node).
declare -gA CLUSTER_ID=()
CLUSTER_PORTS=()
CLUSTER_NODE_TIMEOUT=${CLUSTER_NODE_TIMEOUT:-2000}
_cluster_replicas=0
_cluster_ok() {
  local p
  for p in "${CLUSTER_PORTS[@]}"; do
    ccli "$p" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    # every node knows all three primaries with their slots, and every replica
    [ "$(ccli "$p" CLUSTER NODES 2>/dev/null | awk '$3 ~ /master/ && NF >= 9' | wc -l)" = 3 ] || return 1
    [ "$(ccli "$p" CLUSTER NODES 2>/dev/null | awk '$3 ~ /slave/' | wc -l)" = $((3 * _cluster_replicas)) ] ||
      return 1
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
# start_cluster_node PORT: (re)starts a cluster node on PORT in $TEST_TMP/node-PORT
# (its nodes.conf kept there: a node restarted rejoins the cluster it knew).
start_cluster_node() {
  start_node "$1" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-node-timeout "$CLUSTER_NODE_TIMEOUT"
}
start_cluster() {
  local p i
  _cluster_replicas=${1:-0}
  CLUSTER_PORTS=()
  for i in $(seq 1 $((3 * (1 + _cluster_replicas)))); do
    p=$(free_cluster_port)
    [ -n "$p" ] || topo_die "no free port pair for a cluster node"
    start_cluster_node "$p"
    CLUSTER_PORTS+=("$p")
  done
  timeout 60 redis-cli --cluster create "${CLUSTER_PORTS[@]/#/127.0.0.1:}" --cluster-replicas "$_cluster_replicas" \
    --cluster-yes "${TOPO_CLI_TLS[@]}" >"$TEST_TMP/cluster-create.log" 2>&1 ||
    { cat "$TEST_TMP/cluster-create.log"; topo_die "redis-cli --cluster create failed"; }
  wait_until 30 _cluster_ok || topo_die "the cluster did not reach cluster_state:ok"
  for p in "${CLUSTER_PORTS[@]}"; do CLUSTER_ID[$p]=$(ccli "$p" CLUSTER MYID); done
  export CLUSTER_URL="$TOPO_SCHEME://127.0.0.1:${CLUSTER_PORTS[0]}"
  echo "  cluster: ports ${CLUSTER_PORTS[*]}"
}
# port_of_id ID
port_of_id() { local p; for p in "${CLUSTER_PORTS[@]}"; do [ "${CLUSTER_ID[$p]}" = "$1" ] && echo "$p" && return 0; done; return 1; }
# live_port: the first cluster node that answers PING (nodes may be down).
live_port() { local p; for p in "${CLUSTER_PORTS[@]}"; do _topo_pong "$p" && { echo "$p"; return 0; }; done; return 1; }
# slot_of KEY
slot_of() { ccli "$(live_port)" CLUSTER KEYSLOT "$1"; }
# node_of_slot SLOT [VIEW_PORT]: the port of the primary serving SLOT, as the node
# VIEW_PORT (default: the first that answers) sees it (CLUSTER SHARDS would do as well).
node_of_slot() {
  local slot=$1 view=${2:-$(live_port)} id
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

# With replicas (start_cluster 1):
# replica_of PORT [VIEW_PORT]: the port of a replica the cluster lists for the
# primary on PORT (as VIEW_PORT, default the first that answers, sees it).
replica_of() {
  local id
  id=$(ccli "${2:-$(live_port)}" CLUSTER NODES | awk -v m="${CLUSTER_ID[$1]}" '$3 ~ /slave/ && $4 == m { print $1; exit }')
  [ -n "$id" ] && port_of_id "$id"
}
# primaries: the ports of the nodes serving slots, as the first that answers sees them.
primaries() {
  local id
  for id in $(ccli "$(live_port)" CLUSTER NODES | awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9 { print $1 }'); do
    port_of_id "$id"
  done
}
# acks PORT KEY: a write of KEY on the primary PORT (KEY of a slot it serves)
# reaches a replica within 500ms (WAIT on the same connection).
acks() { [ "$(printf 'SET %s 1\nWAIT 1 500\n' "$2" | ccli "$1" | tail -n 1)" = 1 ]; }
# cluster_settled: every node up and in cluster_state:ok, 3 primaries serving
# slots, each with one replica whose link is up and which the primary lists
# online; every node of every view agrees on the primaries.
cluster_settled() {
  local p r n
  _cluster_ok || return 1
  for p in $(primaries); do
    r=$(replica_of "$p") || return 1
    _link_up "$r" || return 1
    ccli "$p" INFO replication | tr -d '\r' | grep -q '^slave0:.*state=online' || return 1
  done
  n=$(primaries | wc -l)
  [ "$n" = 3 ]
}
# cut_replica_link PORT: the primary on PORT refuses its replicas' replication
# (ACL: no PSYNC, SYNC or REPLCONF) and drops their links: INFO replication then
# says connected_slaves:0, while the cluster still lists them (issue 33).
cut_replica_link() {
  ccli "$1" ACL SETUSER default -psync -sync -replconf >/dev/null &&
    ccli "$1" CLIENT KILL TYPE replica >/dev/null
}
# restore_replica_link PORT: PSYNC (and REPLCONF) first, SYNC once a replica is
# back (a replica whose PSYNC is refused falls back to SYNC at once, and one
# attached by SYNC never acknowledges a write).
restore_replica_link() {
  local r
  ccli "$1" ACL SETUSER default +psync +replconf >/dev/null
  r=$(replica_of "$1")
  wait_until 15 _link_up "$r"
  ccli "$1" ACL SETUSER default +sync >/dev/null
}

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
    if [ ${#TOPO_SERVER_TLS[@]} -gt 0 ]; then
      printf '%s %s\n' port 0 tls-port "$s" tls-cert-file "${TOPO_SERVER_TLS[1]}" \
        tls-key-file "${TOPO_SERVER_TLS[3]}" tls-ca-cert-file "${TOPO_SERVER_TLS[5]}" tls-auth-clients no \
        tls-replication yes >"$dir/sentinel.conf"
    else
      echo "port $s" >"$dir/sentinel.conf"
    fi
    cat >>"$dir/sentinel.conf" <<EOF
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
  export SENTINEL_URL="$TOPO_SCHEME-sentinel://127.0.0.1:${SENTINEL_PORTS[0]},127.0.0.1:${SENTINEL_PORTS[1]},127.0.0.1:${SENTINEL_PORTS[2]}/mymaster"
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
# set is settled. Bounded: 40s (a loaded CI machine once needed more than 25s).
# Sets SETTLED_PRIMARY and SETTLED_REPLICA: on a loaded machine the sentinels may
# judge NEW down meanwhile and fail over back to OLD (seen once in CI), a settled
# set all the same. Not settled: prints what each node and sentinel says.
settle_after_failover() {
  SETTLED_PRIMARY=$1 SETTLED_REPLICA=$2
  wait_until 10 all_sentinels_name "$1" || { sentinel_views "$1" "$2"; return 1; }
  [ "$(role_of "$2")" = slave ] || ccli "$2" REPLICAOF 127.0.0.1 "$1" >/dev/null
  wait_until 30 settled_either_way "$1" "$2" || { sentinel_views "$1" "$2"; return 1; }
  if ! sentinels_settled "$1" "$2"; then
    SETTLED_PRIMARY=$2 SETTLED_REPLICA=$1
    echo "  the sentinels failed over back to $2 meanwhile: $2 primary, $1 its replica"
  fi
}
settled_either_way() { sentinels_settled "$1" "$2" || sentinels_settled "$2" "$1"; }
# sentinel_views PRIMARY REPLICA: the nodes' roles and links and each sentinel's
# view, for a failure message.
sentinel_views() {
  local s
  echo "  node $1: role $(role_of "$1"); node $2: role $(role_of "$2"), $(ccli "$2" INFO replication | tr -d '\r' | grep -E '^(master_port|master_link_status)' | paste -sd' ')"
  for s in "${SENTINEL_PORTS[@]}"; do
    echo "  sentinel $s: primary $(current_primary "$s"), flags $(sentinel_field "$s" flags), others $(sentinel_field "$s" num-other-sentinels); replicas: $(ccli "$s" SENTINEL REPLICAS mymaster 2>/dev/null | paste -sd' ' | grep -oE '(port [0-9]+|flags [^ ]+|master-link-status [^ ]+)' | paste -sd' ')"
  done
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

# waiter_after_failover T T_END T_PROMOTED WHAT: the background `run -w` T (bg,
# its CMD writing T.start, wall ms) waited through a crash failover (issue 42):
# it started CMD within 1s + SLACK_MS of when the lock was free on the promoted
# node (the holder's lease end T_END, or its promotion T_PROMOTED if later),
# and exited 0.
waiter_after_failover() {
  local t=$1 what=$4 t_free start d
  t_free=$(( $2 > $3 ? $2 : $3 ))
  check "$what: the waiter takes the lock and runs CMD" wait_until 45 has_file "$t.start"
  start=$(cat "$t.start" 2>/dev/null || echo $(( t_free + 999999 ))) # not started: no time to compare
  d=$(( start - t_free ))
  echo "  FIGURE a waiter through a crash failover ($what): CMD started ${d}ms after the lock was free there (lease end, or the promotion if later)"
  check "$what: within 1s + SLACK_MS of that (${d}ms)" test "$d" -lt $(( 1000 + SLACK_MS ))
  check "$what: the waiter exits 0" wait_until 10 eval "bg_done '$t' && [ \"\$(bg_rc '$t')\" = 0 ]"
  bg_done "$t" && [ "$(bg_rc "$t")" = 0 ] || echo "  the waiter: rc $(bg_rc "$t"), $(head -c 300 "$t.err")"
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

# ---------------------------------------------------------------- Redlock
# Independent standalone masters for Redlock (several URLs). Masters are numbered
# from 0 in the order started, across calls: MASTER_PORTS[I], MASTER_PID[I].
# start_masters N: N more masters on free ports, each in $TEST_TMP/master-PORT
# (started together, then each waited for). Sets MASTER_SET (the indices of these
# N) and exports REDLOCK_URLS, their comma list redis://127.0.0.1:P1,....
MASTER_PORTS=()
MASTER_PID=()
MASTER_SET=()
REDLOCK_URLS=
_master_start() {
  local i=$1 port=${MASTER_PORTS[$1]}
  local dir="$TEST_TMP/master-$port"
  _topo_start "$dir" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir"
  MASTER_PID[$i]=$TOPO_PID
}
start_masters() {
  local n=$1 k i p
  MASTER_SET=()
  for k in $(seq 1 "$n"); do
    i=${#MASTER_PORTS[@]}
    p=$(free_port)
    MASTER_PORTS[$i]=$p
    MASTER_SET+=("$i")
    _master_start "$i"
  done
  for i in "${MASTER_SET[@]}"; do
    wait_until 5 _topo_pong "${MASTER_PORTS[$i]}" || topo_die "master $i did not start on port ${MASTER_PORTS[$i]}"
  done
  export REDLOCK_URLS
  REDLOCK_URLS=$(redlock_urls "${MASTER_SET[@]}")
  echo "  masters ${MASTER_SET[*]}: ports $(for i in "${MASTER_SET[@]}"; do printf '%s ' "${MASTER_PORTS[$i]}"; done)"
}
# master_url I: redis://127.0.0.1:PORT of master I.
master_url() { echo "redis://127.0.0.1:${MASTER_PORTS[$1]}"; }
# redlock_urls I...: the comma list of those masters' URLs.
redlock_urls() {
  local i out=
  for i in "$@"; do out+="${out:+,}$(master_url "$i")"; done
  echo "$out"
}
# stop_master I: SIGKILL (its port stays free for restart_master_empty).
stop_master() {
  local pid=${MASTER_PID[$1]:-}
  [ -n "$pid" ] || return 0
  kill -CONT "$pid" 2>/dev/null
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  MASTER_PID[$1]=
}
# restart_master_empty I: SIGKILL if it runs, then a new server on the same port
# with no data (no persistence), waited for.
restart_master_empty() {
  stop_master "$1"
  _master_start "$1"
  wait_until 5 _topo_pong "${MASTER_PORTS[$1]}" || topo_die "master $1 did not restart on port ${MASTER_PORTS[$1]}"
}
# freeze_master I / thaw_master I: SIGSTOP / SIGCONT (the kernel still accepts
# connections; nothing is answered while frozen).
freeze_master() { kill -STOP "${MASTER_PID[$1]}"; }
thaw_master() { kill -CONT "${MASTER_PID[$1]}"; }
# mcli I ARGS...: redis-cli against master I (at most 3s: a frozen one never answers).
mcli() { local i=$1; shift; timeout 3 redis-cli -h 127.0.0.1 -p "${MASTER_PORTS[$i]}" "$@"; }
master_up() { [ "$(mcli "$1" PING 2>/dev/null)" = PONG ]; }

# Where a lock is, over a set of masters given as indices (default: MASTER_SET).
# held_on NAME OWNER I...: how many of them have OWNER's field in the hash NAME.
held_on() {
  local name=$1 owner=$2 i n=0; shift 2
  for i in "${@:-${MASTER_SET[@]}}"; do
    [ "$(mcli "$i" HEXISTS "$name" "$owner" 2>/dev/null)" = 1 ] && n=$((n + 1))
  done
  echo "$n"
}
# held_everywhere NAME OWNER I... / held_nowhere NAME OWNER I...: checks of the above.
held_everywhere() {
  local name=$1 owner=$2; shift 2
  local idx=("${@:-${MASTER_SET[@]}}")
  [ "$(held_on "$name" "$owner" "${idx[@]}")" = "${#idx[@]}" ]
}
held_nowhere() { [ "$(held_on "$@")" = 0 ]; }
# nodes_with_key NAME I...: the indices of the masters where the key NAME exists.
nodes_with_key() {
  local name=$1 i; shift
  for i in "${@:-${MASTER_SET[@]}}"; do
    [ "$(mcli "$i" EXISTS "$name" 2>/dev/null)" = 1 ] && printf '%s ' "$i"
  done
  echo
}
# lock_owner_on I NAME: the owner field of the lock NAME on master I (the hash's
# fields other than rlock:meta; empty if none).
lock_owner_on() { mcli "$1" HKEYS "$2" 2>/dev/null | grep -vx 'rlock:meta' | head -n1; }
# fence_on I NAME: the fencing counter redisson_lock_token:{NAME} on master I.
fence_on() { mcli "$1" GET "redisson_lock_token:{$2}" 2>/dev/null; }
# foreign_lock I NAME OWNER [PX]: a lock of another owner on master I, made by hand.
foreign_lock() {
  mcli "$1" HSET "$2" "$3" 1 >/dev/null
  mcli "$1" PEXPIRE "$2" "${4:-30000}" >/dev/null
}
# del_on NAME I...: DEL NAME on those masters (that are up).
del_on() { local name=$1 i; shift; for i in "${@:-${MASTER_SET[@]}}"; do mcli "$i" DEL "$name" >/dev/null 2>&1; done; }

# A TCP proxy (tests/chaos/proxy.py) in front of master I, for delays and
# partitions. proxy_master I: sets PROXY_PORT_OF[I], PROXY_CTL_OF[I]; the mode
# starts as pass. proxy_url I: its redis:// URL. proxy_set I MODE [MS]: pass,
# delay MS, delay-down MS, delay-up MS, silent, blackhole, drop.
declare -gA PROXY_PORT_OF=() PROXY_CTL_OF=()
proxy_master() {
  local i=$1 f="$TEST_TMP/proxy-$1"
  local script
  script="$(cd "$(dirname "${BASH_SOURCE[0]}")/../chaos" && pwd)/proxy.py"
  echo pass >"$f.ctl"
  rm -f "$f.port"
  python3 "$script" --target-port "${MASTER_PORTS[$i]}" --port-file "$f.port" --ctl "$f.ctl" \
    --log "$f.log" --max-seconds 300 &
  _pids+=($!)
  echo $! >>"$TEST_TMP/proxies.pid"
  wait_until 5 test -s "$f.port" || topo_die "the proxy for master $i did not start"
  PROXY_PORT_OF[$i]=$(cat "$f.port")
  PROXY_CTL_OF[$i]=$f.ctl
}
proxy_url() { echo "redis://127.0.0.1:${PROXY_PORT_OF[$1]}"; }
proxy_set() {
  local i=$1; shift
  echo "$*" >"${PROXY_CTL_OF[$i]}.tmp" && mv "${PROXY_CTL_OF[$i]}.tmp" "${PROXY_CTL_OF[$i]}"
  sleep 0.05 # the proxy looks at its control file every 20ms
}

# redlock_setup N: N masters, RLOCK_URL naming them all, TO = short per-node timeouts.
redlock_setup() {
  start_masters "$1"
  export RLOCK_URL=$REDLOCK_URLS
  TO=(--connect-timeout 500ms --io-timeout 500ms)
}

# bg_long_run T NAME [run options...]: `run NAME --ttl 3s -- CMD` in the background
# (bg), CMD a shell that writes its pid to T.sh.pid, sleeps 15 s and marks its
# natural end in T.cmdend. Sets CMD_PID.
bg_long_run() {
  local t=$1 name=$2; shift 2
  bg "$t" "${TO[@]}" run "$name" --ttl 3s "$@" -- sh -c '
  echo $$ >"$1.sh.pid"
  sleep 15
  date +%s%3N >"$1.cmdend"' sh "$t"
  CMD_PID=$(pid_of "$t.sh.pid")
}

# set_counters NAME V0 V1 ...: the fencing counter of NAME on master 0, 1, ...
set_counters() {
  local name=$1 i=0 v; shift
  for v in "$@"; do mcli "$i" SET "redisson_lock_token:{$name}" "$v" >/dev/null; i=$((i + 1)); done
}
