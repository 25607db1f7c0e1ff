#!/usr/bin/env bash
# Issue 41 (3): time spent before the request is not charged to the lease. A
# Cluster URL whose first seed accepts connections and never answers (a TCP
# proxy, silent) costs --io-timeout before the live seed gives the slot map;
# a Sentinel URL whose first sentinel is silent alike before the next names
# the primary. The lease counts from the acquisition's own send after that, so
# `run --ttl 3s` keeps its lock and CMD finishes (was: CMD stopped, exit 76,
# history lost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_cluster
P1=${CLUSTER_PORTS[0]}
proxy_start "$P1"
proxy_mode silent
SILENT=127.0.0.1:$PROXY_PORT
URL="redis-cluster://$SILENT,127.0.0.1:$P1"
for i in 1 2 3; do
  name=$(name_on_port "${CLUSTER_PORTS[$(( i % 3 ))]}" seed$i)
  T=$TEST_TMP/s$i
  bg "$T" -u "$URL" --io-timeout 2s run --ttl 3s "$name" -- sh -c 'sleep .5; echo done >"$1"' sh "$T.cmd"
  check "run $i ends" wait_until 30 bg_done "$T"
  echo "  run $i through a silent seed: rc $(bg_rc "$T"); $(cat "$T.err")"
  check "run $i: CMD finished" has_file "$T.cmd"
  check "run $i: exit 0, its lease counted from its own send (not 76)" test "$(bg_rc "$T")" = 0
  check "run $i: one ending in history, released" \
    eval '[ "$("$RLOCK" -u "redis://127.0.0.1:$P1" history "$name" | grep -oE " (released|expired|gone|lost|force-unlocked) " | tr -d " ")" = released ]'
done
# acquire alike: its lease is whole (the JSON's ttl_ms), and it is held
r -u "$URL" --io-timeout 2s --json acquire --ttl 3s "$(name_on_port "$P1" seedA)"
expect_rc 0 "acquire through a silent seed"
check "acquire: the lock is held" test "$(ccli "$P1" EXISTS "$(name_on_port "$P1" seedA)")" = 1

# --- Sentinel: the first sentinel silent
start_sentinel_set
proxy_start "${SENTINEL_PORTS[0]}"
proxy_mode silent
SURL="redis-sentinel://127.0.0.1:$PROXY_PORT,127.0.0.1:${SENTINEL_PORTS[1]},127.0.0.1:${SENTINEL_PORTS[2]}/mymaster"
for i in 1 2; do
  T=$TEST_TMP/ss$i
  bg "$T" -u "$SURL" --io-timeout 2s run --ttl 3s sentinel$i -- sh -c 'sleep .5; echo done >"$1"' sh "$T.cmd"
  check "sentinel run $i ends" wait_until 30 bg_done "$T"
  echo "  run $i through a silent sentinel: rc $(bg_rc "$T"); $(cat "$T.err")"
  check "sentinel run $i: CMD finished" has_file "$T.cmd"
  check "sentinel run $i: exit 0, its lease counted from its own send (not 76)" test "$(bg_rc "$T")" = 0
done
finish
