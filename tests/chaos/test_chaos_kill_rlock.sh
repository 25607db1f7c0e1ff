#!/usr/bin/env bash
# Chaos 2 - rlock SIGKILLed while its command holds the lock (20 cases). The
# command dies with it (rlock's supervising process gets the parent-death
# signal, SIGKILLs CMD's tree and releases the lock: no orphan keeps working
# unprotected), and a waiter queued on the lock gets it (its acquisition in the
# server's MONITOR log) within TTL + 200ms of the kill (at once, since the
# supervisor releases). The witness oracle sees no overlap.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

CASES=20 EPS=200
monitor_start "$TEST_TMP/mon"
one_case() {
  local c=$1 name=K$1 wd=$TEST_TMP/w-k$1 f=$TEST_TMP/k$1
  mkdir -p "$wd"
  BG_ENV=(WITNESS_DIR="$wd")
  bg "$f.h" run --ttl "$TTL" --kill-after 0.5s "$name" -- "$WITNESS" --hold 30 --tag h
  local holder=$BG_PID
  if ! wait_event START h 10 "$wd"; then
    record started 0 "case $c: the holder's command did not start"; return
  fi
  local witness=$EV_PID
  record started 1 "case $c"
  bg "$f.w" run -w 20s --ttl "$TTL" "$name" -- "$WITNESS" --hold 0.05 --tag w
  sleep_ms "$(rand_ms 100 900)"
  local t_kill; t_kill=$(ms)
  kill -9 "$holder"
  local took
  took=$(wait_dead "$witness" 5)
  record child_died "$([ "$took" -le 300 ] && echo 1 || echo 0)" "case $c: ${took}ms"
  record death_ms 1 "$took"
  wait_until 10 bg_done "$f.w"
  # When the waiter got the lock: its HSET, in the server's MONITOR log.
  local got; got=$(python3 "$TOOL" lease "$MON_FILE" "$name" | sed -n 2p | cut -d' ' -f2)
  if [ -n "$got" ]; then
    local lat=$(( got - t_kill ))
    record handover "$([ "$lat" -le $((TTL_MS + EPS)) ] && echo 1 || echo 0)" "case $c: ${lat}ms"
    record handover_ms 1 "$lat"
  else
    record handover 0 "case $c: the waiter never got the lock"
  fi
  record waiter_rc "$([ "$(bg_rc "$f.w")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.w")"
  oracle "$wd"
  record no_overlap "$([ "$O_overlaps" = 0 ] && echo 1 || echo 0)" "case $c: $O_overlaps overlaps"
}
lanes 4 $CASES 90 one_case
monitor_stop
verdict started "the holder's command started"
verdict child_died "the command died within 300ms of rlock's SIGKILL ($(summary death_ms ms))"
verdict handover "a queued waiter got the lock within TTL + ${EPS}ms of the kill ($(summary handover_ms ms))"
verdict waiter_rc "the waiter's run exited 0"
verdict no_overlap "no overlap seen by the oracle"
hygiene_checks kill-rlock
finish
