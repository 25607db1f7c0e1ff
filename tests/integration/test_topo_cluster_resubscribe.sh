#!/usr/bin/env bash
# A waiter on a Redis 7 Cluster listens with SSUBSCRIBE on the node serving the
# lock. When the lock's slot moves to another node, the server ends that
# subscription (a `sunsubscribe` push): the waiter subscribes again, on the new
# node, and still wakes at the release. Twice: the cluster as the one
# deployment, and as one master of a Redlock (two standalone masters beside it).
# Before: the one-deployment waiter subscribed again where its stale slot map
# said, took the MOVED answer for a confirmation and heard nothing more (it
# woke at its deadline); the Redlock waiter had a loop of its own that ignored
# the push and listened to that master no more (issue 22, point 3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_cluster
start_masters 2
P1=${CLUSTER_PORTS[0]}
chan() { echo "redisson_lock__channel:{$1}"; }
# (on the release channel, and the waiters' own: a plain waiter queued for its
# turn listens on both, and on the turns channel, lua/lib/turns.lua)
shard_subs() {
  echo $(( $(ccli "$1" PUBSUB SHARDNUMSUB "$(chan "$2")" | sed -n 2p) +
           $(ccli "$1" PUBSUB SHARDCHANNELS "$(chan "$2"):*" | grep -c .) ))
}
has_shard_sub() { [ "$(shard_subs "$1" "$2")" -ge 1 ] 2>/dev/null; }
CLUSTER=(-u "redis://127.0.0.1:$P1")
REDLOCK=(-u "redis://127.0.0.1:$P1" -u "$(master_url 0)" -u "$(master_url 1)")

# moving_waiter WHAT URL-ARGS...: a holder takes a name served by P1, a
# waiter waits for it, the name's slot moves to another node, the holder
# releases; the waiter must have subscribed again on the new node and got it.
moving_waiter() {
  local what=$1; shift
  local w to slot t
  w=$(name_on_port "$P1" moving) || { echo "FAIL: no name found for port $P1"; exit 1; }
  to=$(other_port "$P1")
  slot=$(slot_of "$w")
  t=$TEST_TMP/waiter-$w
  r "$@" acquire "$w" --ttl 60s --owner holder
  expect_rc 0 "$what: the holder takes $w (the cluster serves it on $P1)"
  bg "$t" "$@" acquire "$w" -w 30s --owner waiter
  check "$what: the waiter SSUBSCRIBEs on $P1, the node serving $w" wait_until 10 has_shard_sub "$P1" "$w"
  check "$what: slot $slot ($w) moves from $P1 to $to" migrate_slot "$slot" "$P1" "$to"
  check "$what: the lock moved with its slot" test "$(ccli "$to" HGET "$w" holder)" = 1
  check "$what: the waiter SSUBSCRIBEs again, on $to" wait_until 10 has_shard_sub "$to" "$w"
  check "$what: the waiter is still waiting" test ! -e "$t.rc"
  local t_rel; t_rel=$(ms)
  r "$@" release "$w" --owner holder
  expect_rc 0 "$what: the holder releases $w"
  check "$what: the waiter finishes" wait_until 10 bg_done "$t"
  local d=$(( $(bg_t "$t") - t_rel ))
  check "$what: the waiter got the lock (rc $(bg_rc "$t"): $(head -c 300 "$t.err"))" test "$(bg_rc "$t")" = 0
  check "$what: it woke at the release, not at its deadline (${d}ms < 5000ms)" test "$d" -ge 0 -a "$d" -lt 5000
  check "$what: the waiter holds $w on the cluster's new node" test "$(ccli "$to" HGET "$w" waiter)" = 1
  r "$@" release "$w" --owner waiter
  expect_rc 0 "$what: the waiter releases $w"
}
moving_waiter "one deployment" "${CLUSTER[@]}"
moving_waiter "Redlock" "${REDLOCK[@]}"
finish
