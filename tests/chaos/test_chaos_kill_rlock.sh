#!/usr/bin/env bash
# Chaos 2 - rlock SIGKILLed while its command holds the lock (20 cases). The
# command dies with it (CMD's guardian gets the parent-death signal and starts
# rlock again, which SIGKILLs CMD's tree and releases the lock: no orphan keeps
# working unprotected): the command dies, and no waiter queued on the lock gets in
# while it lives (the witness oracle's flock: the kernel drops it at the
# holder's exit), and the holder's lease ended by that release, not
# by running out (the server's MONITOR log). How long each took is printed
# (bench/run --only reaction measures it on an idle machine).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

CASES=20
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
  deathwatch "$witness" "$f.death"
  record started 1 "case $c"
  bg "$f.w" run -w 20s --ttl "$TTL" "$name" -- "$WITNESS" --hold 0.05 --tag w
  sleep_ms "$(rand_ms 100 900)"
  local t_kill; t_kill=$(ms)
  kill -9 "$holder"
  local took
  took=$(wait_dead "$witness" 10)
  record death_ms 1 "$took"
  wait_until 10 bg_done "$f.w"
  wait_until 5 has_file "$f.death"
  # The holder's lease and the waiter's, from the server's MONITOR log: "owner
  # start end how" (the waiter's start is its HSET).
  local leases; leases=$("$PY" "$TOOL" lease "$MON_FILE" "$name")
  local how; how=$(sed -n 1p <<<"$leases" | cut -d' ' -f4)
  local got; got=$(sed -n 2p <<<"$leases" | cut -d' ' -f2)
  local death; death=$(cat "$f.death" 2>/dev/null || echo -1)
  if [ -n "$got" ]; then
    # (The death's pidfd stamp comes when the watcher gets a core: late by up to
    # a scheduling delay, so it is a figure; the order is the oracle's verdict.)
    record child_died "$([ "$death" -gt 0 ] && echo 1 || echo 0)" "case $c: death $death"
    record gap_ms 1 "$(( got - death ))"
    record handover "$([ "$how" = deleted ] && echo 1 || echo 0)" "case $c: the holder's lease $how"
    record handover_ms 1 "$(( got - t_kill ))"
  else
    record child_died 0 "case $c: the waiter never got the lock"
    record handover 0 "case $c: the waiter never got the lock"
  fi
  record waiter_rc "$([ "$(bg_rc "$f.w")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.w")"
  oracle "$wd"
  record no_overlap "$([ "$O_overlaps" = 0 ] && echo 1 || echo 0)" "case $c: $O_overlaps overlaps"
}
lanes 4 $CASES 90 one_case
monitor_stop
verdict started "the holder's command started"
verdict child_died "the command died (after the SIGKILL: $(summary death_ms ms); the waiter's HSET after that death stamp: $(summary gap_ms ms))"
verdict handover "the holder's lease ended by the release after the kill, not by running out (waiter in after the kill: $(summary handover_ms ms))"
verdict waiter_rc "the waiter's run exited 0"
verdict no_overlap "no overlap seen by the oracle: the waiter's command never ran beside the killed one"
hygiene_checks kill-rlock
finish
