#!/usr/bin/env bash
# Chaos 3 - rlock SIGSTOPped for 2.5s, longer than its 1.5s lease, then
# continued (20 cases): both of its processes, the one the caller started and
# its supervisor (rlock-run), as a frozen host or `kill -STOP` of the job would. Meanwhile the lease runs out and a waiter takes the
# lock: the oracle must see that overlap (it proves the oracle works; no lease
# lock can prevent it). When continued, rlock sees on its monotonic clock that
# its deadline passed and SIGKILLs the command at once, without waiting on the
# network; it exits 76; its late release does not touch the new holder's lock;
# and the fenced resource refuses every write of the old holder made after the
# new one's first write.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

CASES=20
one_case() {
  local c=$1 name=P$1 wd=$TEST_TMP/w-p$1 f=$TEST_TMP/p$1
  mkdir -p "$wd"
  BG_ENV=(WITNESS_DIR="$wd")
  bg "$f.h" run --ttl "$TTL" --kill-after 0.5s "$name" -- "$WITNESS" --hold 30 --write-every 0.1 --tag h
  local holder=$BG_PID
  if ! wait_event START h 10 "$wd"; then
    record started 0 "case $c: the holder's command did not start"; return
  fi
  local witness=$EV_PID
  record started 1 "case $c"
  # The new holder holds 3s: long enough that its lock is still there when the
  # old holder has exited, even when a sanitizer build makes that exit slow
  # (with 1.5s a slow exit let the new holder finish first: an empty HGET that
  # said nothing about the old release).
  bg "$f.w" run -w 20s "$name" -- "$WITNESS" --hold 3 --write-every 0.1 --tag w
  sleep_ms "$(rand_ms 50 500)"
  local supervisor; supervisor=$(pgrep -P "$holder" -x rlock-run)
  kill -STOP "$holder" $supervisor
  sleep 2.5
  kill -CONT "$holder" $supervisor
  local took
  took=$(wait_dead "$witness" 5)
  record killed_at_once "$([ "$took" -le 250 ] && echo 1 || echo 0)" "case $c: ${took}ms"
  record kill_ms 1 "$took"
  wait_until 5 bg_done "$f.h"
  record holder_76 "$([ "$(bg_rc "$f.h")" = 76 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.h")"
  if wait_event START w 1 "$wd"; then
    local owner=$EV_OWNER
    # The old holder has exited (and sent its owner-checked release): the new
    # holder's lock must be intact while its command still runs.
    local held; held=$(rcli HGET "$name" "$owner")
    record new_lock_intact "$([ "$held" = 1 ] && bg_done "$f.h" && echo 1 || echo 0)" "case $c: HGET $held"
  else
    record new_lock_intact 0 "case $c: the waiter did not start during the pause"
  fi
  wait_until 10 bg_done "$f.w"
  record waiter_rc "$([ "$(bg_rc "$f.w")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.w")"
  oracle "$wd"
  record overlap_seen "$([ "$O_overlaps" -ge 1 ] && echo 1 || echo 0)" "case $c: $O_overlaps overlaps"
  record stale_refused "$([ "$O_stale_rejected" -ge 1 ] && [ "$O_stale_accepted" = 0 ] && echo 1 || echo 0)" \
    "case $c: $O_stale_rejected refused, $O_stale_accepted accepted"
  record fences_increase "$([ "$O_fence_violations" = 0 ] && echo 1 || echo 0)" "case $c: $O_fence_violations"
}
lanes 4 $CASES 120 one_case
verdict started "the holder's command started"
verdict overlap_seen "the oracle saw the overlap the pause caused (it works)"
verdict killed_at_once "on SIGCONT the command was killed within 250ms ($(summary kill_ms ms))"
verdict holder_76 "the paused rlock exited 76"
verdict new_lock_intact "the old holder's release left the new holder's lock alone"
verdict waiter_rc "the new holder's run exited 0"
verdict stale_refused "the fenced resource refused the old token's writes, accepted none"
verdict fences_increase "fences strictly increase in acquisition order"
hygiene_checks pause-rlock
finish
