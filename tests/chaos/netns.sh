#!/usr/bin/env bash
# netns.sh: hosts in network namespaces on a private bridge, and the network's
# faults between them (issue 34). Root only. Nothing is made or changed outside
# the namespaces it creates: the bridge lives in a namespace of its own, each
# host and the server in one each, linked by veth pairs created straight into
# their namespaces, with addresses of 10.77.0.0/24 that exist only there.
#
#   netns.sh up ID HOST...     make ID-sw (the bridge), ID-srv (10.77.0.1) and
#                              ID-HOST for each HOST (10.77.0.11, .12, ... in
#                              the order given); prints nothing; fails loudly
#   netns.sh ip ID HOST        a host's address (srv: the server's)
#   netns.sh exec ID HOST CMD...   runs CMD in that namespace
#   netns.sh reaches ID HOST OTHER  exit 0 when HOST reaches OTHER now
#   netns.sh cut ID HOST       silent partition of HOST from everyone, both
#                              ways: iptables DROP on HOST's INPUT and on every
#                              other namespace's INPUT from HOST (nothing is
#                              refused, packets vanish)
#   netns.sh linkdown ID HOST  HOST's port on the bridge down (its link: no carrier)
#   netns.sh slow ID HOST BPS  HOST's egress through a token bucket of BPS
#                              bits/s (tbf): what it sends queues in its own
#                              kernel below the socket and arrives late, in order
#   netns.sh fast ID HOST      lifts `slow`'s rate: what waited goes out now, in
#                              order (a request delivered late, then the rest)
#   netns.sh loss ID HOST PCT  HOST loses PCT % of what it receives and of what
#                              the others receive from it (iptables statistic)
#   netns.sh heal ID HOST      undoes all of the above for HOST
#   netns.sh netem ID HOST ARGS...  tc netem on HOST's egress (delay/loss), where
#                              the kernel has it; exits 3 when it has not
#   netns.sh down ID           deletes every namespace of ID (their processes
#                              are killed first); quiet, never fails
#
# ID must be short (namespace names ID-sw, ID-srv, ID-HOST) and unique per run
# (tests use their pid), so parallel runs never meet.
set -u
CMD=${1:-}
ID=${2:-}
[ -n "$CMD" ] && [ -n "$ID" ] || { echo "usage: netns.sh up|ip|exec|cut|linkdown|slow|loss|heal|netem|down ID ..." >&2; exit 2; }
shift 2
NET=10.77.0
die() { echo "netns.sh: $*" >&2; exit 1; }
hosts_file() { echo "${TMPDIR:-/tmp}/rlock-netns-$ID.hosts"; }
# The index of HOST (1-based) in the order `up` was given; srv is 0.
index_of() {
  [ "$1" = srv ] && { echo 0; return; }
  local i=0 h
  while read -r h; do
    i=$((i + 1))
    [ "$h" = "$1" ] && { echo "$i"; return; }
  done <"$(hosts_file)"
  die "no host $1 in $ID"
}
addr_of() { local i; i=$(index_of "$1") || exit 1; [ "$i" = 0 ] && echo "$NET.1" || echo "$NET.$((10 + i))"; }
all_ns() { echo srv; cat "$(hosts_file)" 2>/dev/null; }
in_ns() { local ns=$1; shift; ip netns exec "$ID-$ns" "$@"; }
# reaches NS ADDR: a TCP connect from NS to ADDR's port 9 (nothing listens)
# is answered (refused) within 1 s.
reaches() {
  in_ns "$1" timeout 1 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1 | grep -q "refused"
}

case "$CMD" in
up)
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
  [ $# -ge 1 ] || die "up: no hosts"
  for tool in ip iptables tc; do command -v $tool >/dev/null || die "$tool is not installed (iproute2, iptables)"; done
  ip netns add "$ID-sw" || die "cannot create network namespaces"
  printf '%s\n' "$@" >"$(hosts_file)"
  in_ns sw ip link set lo up
  in_ns sw ip link add br0 type bridge || die "cannot create a bridge"
  in_ns sw ip link set br0 up
  i=0
  for ns in srv "$@"; do
    [ "$ns" = srv ] || i=$((i + 1))
    ip netns add "$ID-$ns" || die "cannot create namespace $ID-$ns"
    in_ns "$ns" ip link set lo up
    ip link add eth0 netns "$ID-$ns" type veth peer name "p$i" netns "$ID-sw" || die "cannot create a veth pair"
    in_ns sw ip link set "p$i" master br0
    in_ns sw ip link set "p$i" up
    in_ns "$ns" ip addr add "$(addr_of "$ns")/24" dev eth0
    in_ns "$ns" ip link set eth0 up
  done
  # Every host reaches the server before we say it is up.
  for ns in "$@"; do
    ok=0
    for _ in $(seq 1 50); do
      reaches "$ns" "$NET.1" && { ok=1; break; }
      sleep 0.1
    done
    [ $ok = 1 ] || die "host $ns cannot reach the server"
  done
  ;;
ip) addr_of "$1" ;;
reaches) reaches "$1" "$(addr_of "$2")" ;;
exec) ns=$1; shift; in_ns "$ns" "$@" ;;
cut)
  me=$(addr_of "$1") || exit 1
  in_ns "$1" iptables -A INPUT -i eth0 -j DROP || die "iptables failed in $ID-$1"
  for ns in $(all_ns); do
    [ "$ns" = "$1" ] || in_ns "$ns" iptables -A INPUT -s "$me" -j DROP || die "iptables failed in $ID-$ns"
  done
  ;;
linkdown) i=$(index_of "$1") || exit 1; in_ns sw ip link set "p$i" down ;;
slow)
  # (limit: a queue this long drops nothing)
  in_ns "$1" tc qdisc replace dev eth0 root tbf rate "${2}bit" burst 1600 limit 4000000 || die "tc tbf failed"
  # The bucket starts full (1600 bytes pass at once): spend it, so what
  # follows waits (datagrams to a port nobody reads).
  in_ns "$1" bash -c "head -c 1400 /dev/zero >/dev/udp/$NET.1/9; head -c 1400 /dev/zero >/dev/udp/$NET.1/9" 2>/dev/null
  ;;
fast)
  # (no token bucket there any more, e.g. healed already: nothing to let go)
  in_ns "$1" tc qdisc show dev eth0 | grep -q '^qdisc tbf' || exit 0
  in_ns "$1" tc qdisc change dev eth0 root tbf rate 1gbit burst 1600 limit 4000000 || die "tc tbf failed"
  # The queue is only looked at again when something is sent (its timer was
  # set for the old rate): a datagram to a port nobody reads.
  for _ in 1 2 3; do
    in_ns "$1" bash -c "echo x >/dev/udp/$NET.1/9" 2>/dev/null
    sleep 0.05
  done
  ;;
loss)
  me=$(addr_of "$1") || exit 1
  p=$(awk -v p="$2" 'BEGIN { printf "%.3f", p / 100 }')
  in_ns "$1" iptables -A INPUT -i eth0 -m statistic --mode random --probability "$p" -j DROP || die "iptables failed"
  for ns in $(all_ns); do
    [ "$ns" = "$1" ] || in_ns "$ns" iptables -A INPUT -s "$me" -m statistic --mode random --probability "$p" -j DROP
  done
  ;;
netem) ns=$1; shift; in_ns "$ns" tc qdisc replace dev eth0 root netem "$@" 2>/dev/null || exit 3 ;;
heal)
  me=$(addr_of "$1") || exit 1
  i=$(index_of "$1")
  in_ns sw ip link set "p$i" up
  in_ns "$1" iptables -F INPUT
  in_ns "$1" tc qdisc del dev eth0 root 2>/dev/null
  for ns in $(all_ns); do
    [ "$ns" = "$1" ] && continue
    while in_ns "$ns" iptables -D INPUT -s "$me" -j DROP 2>/dev/null; do :; done
    in_ns "$ns" iptables -S INPUT | grep -- "-s $me/32" | sed 's/^-A/-D/' | while read -r rule; do
      # shellcheck disable=SC2086
      in_ns "$ns" iptables $rule
    done
  done
  ;;
down)
  for ns in $(all_ns) sw; do
    [ -e "/run/netns/$ID-$ns" ] || continue
    for pid in $(ip netns pids "$ID-$ns" 2>/dev/null); do kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
  done
  for ns in $(all_ns) sw; do
    [ -e "/run/netns/$ID-$ns" ] && ip netns del "$ID-$ns" 2>/dev/null
  done
  rm -f "$(hosts_file)"
  exit 0
  ;;
*) die "unknown command $CMD" ;;
esac
