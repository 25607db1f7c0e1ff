#!/usr/bin/env bash
# Chaos 6 - waiters do not depend on the release message.
# (a) 20 cases: a waiter's subscriber connection is killed (CLIENT KILL TYPE
#     pubsub) and the holder's release then happens while it has none: the
#     waiter still gets the lock, by the holder's lease end (it retries then),
#     not at its -w 20s deadline. Both times come from the server's MONITOR log
#     (the holder's DEL, the waiter's HSET); the bound adds one more lease for a
#     loaded machine, and the figures are printed.
# (b) 20 waiters queued on a held lock across a Redis restart without
#     persistence: all 20 finish, one at a time (zero overlaps among them).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis
monitor_start "$TEST_TMP/mon"

killed_sub_case() {
  local c=$1 name=M$1 wd=$TEST_TMP/w-m$1 f=$TEST_TMP/m$1
  mkdir -p "$wd"
  BG_ENV=(WITNESS_DIR="$wd")
  # The holder keeps the lock ~0.8s, then releases (and publishes).
  bg "$f.h" run --ttl "$TTL" "$name" -- "$WITNESS" --hold 0.8 --tag h
  wait_event START h 10 "$wd" || { record started 0 "case $c"; return; }
  local t_start=$EV_T
  bg "$f.w" run -w 20s "$name" -- "$WITNESS" --hold 0.05 --tag w
  wait_until 5 has_sub "$name"
  # Kill the waiter's subscription right away, then keep killing it until
  # the release is past, so the message is lost even if it resubscribes.
  local t_end=$(( t_start + 900 ))
  while [ "$(ms)" -lt $t_end ]; do
    rcli CLIENT KILL TYPE pubsub >/dev/null
    sleep 0.05
  done
  record started 1 "case $c"
  wait_until 25 bg_done "$f.w"
  # "owner start end how" per lease: the holder's ended by its release (DEL);
  # the waiter's started with its HSET.
  local leases; leases=$("$PY" "$TOOL" lease "$MON_FILE" "$name")
  local released got
  released=$(sed -n 1p <<<"$leases" | awk '$4 == "deleted" { print $3 }')
  got=$(sed -n 2p <<<"$leases" | cut -d' ' -f2)
  if [ -n "$released" ] && [ -n "$got" ]; then
    local lat=$(( got - released ))
    record by_ttl "$([ "$lat" -le $((2 * TTL_MS)) ] && echo 1 || echo 0)" "case $c: ${lat}ms after the release"
    record lat_ms 1 "$lat"
  else
    record by_ttl 0 "case $c: leases: $(tr '\n' ';' <<<"$leases")"
  fi
  record waiter_rc "$([ "$(bg_rc "$f.w")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.w")"
  oracle "$wd"
  record no_overlap "$([ "$O_overlaps" = 0 ] && echo 1 || echo 0)" "case $c: $O_overlaps overlaps"
}
lanes 4 20 90 killed_sub_case
monitor_stop
verdict started "the holder's command started"
verdict by_ttl "with its subscription killed, the waiter got the lock by the holder's lease end, not its -w deadline (<= 2 x TTL after the release: $(summary lat_ms ms))"
verdict waiter_rc "the waiter's run exited 0"
verdict no_overlap "no overlap seen by the oracle"

# (b) 20 waiters across a restart. The holder runs a plain sleep (not a witness):
# a restart without persistence forgets its lock, which no lease lock survives.
new_witness_dir restart
bg "$TEST_TMP/r.h" run --ttl "$TTL" --kill-after 0.3s RESTART -- sleep 30
wait_until 5 key_there RESTART
for i in $(seq 1 20); do
  bg "$TEST_TMP/r.w$i" run -w 60s --ttl "$TTL" RESTART -- "$WITNESS" --hold 0.05 --tag w$i
done
subscribed() { [ "$(numsub RESTART)" -ge 20 ]; } # evaluated on every try, not once
check "the 20 waiters are subscribed" wait_until 10 subscribed
redis_restart_empty 300
all_done() { local i; for i in $(seq 1 20); do bg_done "$TEST_TMP/r.w$i" || return 1; done; }
check "all 20 waiters finish after the restart" wait_until 60 all_done
ok=0; for i in $(seq 1 20); do [ "$(bg_rc "$TEST_TMP/r.w$i")" = 0 ] && ok=$((ok + 1)); done
check "all 20 waiters exited 0 ($ok did)" test "$ok" = 20
oracle "$WD"
check "20 critical sections ran ($O_starts starts, $O_ends ends)" test "$O_starts" = 20 -a "$O_ends" = 20
check "zero overlaps among the waiters (got $O_overlaps)" test "$O_overlaps" = 0
check "the counter is exact: 20 (got $O_counter)" test "$O_counter" = 20
wait_until 10 bg_done "$TEST_TMP/r.h"
check "the forgotten holder noticed and exited 76 (rc $(bg_rc "$TEST_TMP/r.h"))" test "$(bg_rc "$TEST_TMP/r.h")" = 76
hygiene_checks lost-message
finish
