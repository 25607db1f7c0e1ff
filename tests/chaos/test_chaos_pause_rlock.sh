#!/usr/bin/env bash
# Chaos 3 - rlock SIGSTOPped for 2.5s, longer than its 1.5s lease, then
# continued (20 cases): both of its processes, the one the caller started and
# CMD's guardian (rlock-guardian), as a frozen host or `kill -STOP` of the job would. Meanwhile the lease runs out and a waiter takes the
# lock: the oracle must see that overlap (it proves the oracle works; no lease
# lock can prevent it). When continued, rlock sees on its monotonic clock that
# its deadline passed and SIGKILLs the command at once: no SIGTERM and no grace
# (the witness logs a TERM it gets), and how long the death took is printed
# (bench/run --only reaction measures it on an idle machine); it exits 76; it
# sends no release once it knows its lease has ended (or one the owner check
# turns into a no-op): the new holder's lock outlives it untouched;
# and the fenced resource refuses every write of the old holder made after the
# new one's first write.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis
RELEASE_SHA=$(sha1sum "$RLOCK_LUA/release.lua" | awk '{ print $1 }')
monitor_start "$TEST_TMP/mon"

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
  local witness=$EV_PID old_owner=$EV_OWNER
  deathwatch "$witness" "$f.death"
  record started 1 "case $c"
  # The new holder holds 4s: long enough that its lock is still there when the
  # old holder's late release arrives, even when a sanitizer build or a loaded
  # machine makes that slow.
  bg "$f.w" run -w 20s "$name" -- "$WITNESS" --hold 4 --write-every 0.1 --tag w
  sleep_ms "$(rand_ms 50 500)"
  local guardian; guardian=$(pgrep -P "$holder" -x rlock-guardian)
  kill -STOP "$holder" $guardian
  sleep 2.5
  kill -CONT "$holder" $guardian
  local took
  took=$(wait_dead "$witness" 10)
  record kill_ms 1 "$took"
  wait_until 10 bg_done "$f.h"
  wait_until 5 has_file "$f.death"
  # The old holder's release (its owner token among the arguments), in the
  # server's MONITOR log (wall ms).
  local death released
  death=$(cat "$f.death" 2>/dev/null || echo -1)
  released=$(grep -F "\"EVALSHA\" \"$RELEASE_SHA\" \"6\" \"$name\"" "$MON_FILE" | grep -F "\"$old_owner\"" | head -n1 |
    awk '{ printf "%.0f", $1 * 1000 }')
  local terms; terms=$(grep -c "^TERM .* tag=h" "$wd/events")
  record killed_at_once "$([ "$death" -gt 0 ] && [ "$terms" = 0 ] && echo 1 || echo 0)" \
    "case $c: death ${death}, $terms SIGTERM seen"
  record holder_76 "$([ "$(bg_rc "$f.h")" = 76 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.h")"
  wait_until 10 bg_done "$f.w"
  # The new holder's lease, from the server's MONITOR log ("owner start end
  # how"): it must have ended by its own release, after the old holder's late
  # release if one was sent (the owner check makes that a no-op; rlock sends
  # none once the lease it knows of has ended).
  local second; second=$("$PY" "$TOOL" lease "$MON_FILE" "$name" | sed -n 2p)
  local end how
  end=$(cut -d' ' -f3 <<<"$second"); how=$(cut -d' ' -f4 <<<"$second")
  record new_lock_intact "$([ -n "$end" ] && { [ -z "$released" ] || [ "$end" -gt "$released" ]; } && [ "$how" = deleted ] &&
    echo 1 || echo 0)" "case $c: old release ${released:-never sent}, new lease: ${second:-none}"
  record late_release "$([ -z "$released" ] && echo 1 || echo 0)" "case $c"
  record waiter_rc "$([ "$(bg_rc "$f.w")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f.w")"
  oracle "$wd"
  # The overlap (and so old-token writes after the new holder's first) exists
  # only if the waiter's command started before the paused holder's died: on a
  # loaded machine the waiter may come in after that. Such a case says nothing
  # about the oracle; it must still see no stale write accepted.
  local w_start; w_start=$(event_t START w "$wd")
  if [ -n "$w_start" ] && [ "$death" -gt 0 ] && [ "$w_start" -lt "$death" ]; then
    record overlap_seen "$([ "$O_overlaps" -ge 1 ] && echo 1 || echo 0)" "case $c: $O_overlaps overlaps"
    record stale_refused "$([ "$O_stale_rejected" -ge 1 ] && [ "$O_stale_accepted" = 0 ] && echo 1 || echo 0)" \
      "case $c: $O_stale_rejected refused, $O_stale_accepted accepted"
  else
    record no_overlap_window 1 "case $c"
  fi
  record stale_never_accepted "$([ "$O_stale_accepted" = 0 ] && echo 1 || echo 0)" "case $c: $O_stale_accepted accepted"
  record fences_increase "$([ "$O_fence_violations" = 0 ] && echo 1 || echo 0)" "case $c: $O_fence_violations"
}
lanes 4 $CASES 120 one_case
verdict started "the holder's command started"
verdict overlap_seen "the oracle saw the overlap the pause caused, where the waiter came in before the paused holder's command died (it works; $(values no_overlap_window | wc -l) cases without that window)"
verdict killed_at_once "on SIGCONT the command was SIGKILLed at once, no SIGTERM first (dead after $(summary kill_ms ms))"
verdict holder_76 "the paused rlock exited 76"
verdict new_lock_intact "the old holder left the new holder's lock alone ($(values late_release | grep -c 1) of them sent no late release)"
verdict waiter_rc "the new holder's run exited 0"
verdict stale_refused "the fenced resource refused the old token's writes in those cases"
verdict stale_never_accepted "the fenced resource accepted no old-token write in any case"
verdict fences_increase "fences strictly increase in acquisition order"
monitor_stop
hygiene_checks pause-rlock
finish
