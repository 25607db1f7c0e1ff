#!/usr/bin/env bash
# Chaos 1 - plain contention, the oracle's baseline: 4 workers x 12 runs of
# `rlock run -w --ttl 1.5s` on one lock, each running the witness (flock -n
# critical section, read-sleep-write counter, fenced writes). Expected: zero
# overlaps, the counter exactly 48, fences strictly increasing in the order the
# critical sections began, no stale write (accepted or refused).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

WORKERS=4 RUNS=12
new_witness_dir c1
t0=$(ms)
for w in $(seq 1 $WORKERS); do
  (
    fails=0
    for i in $(seq 1 $RUNS); do
      env CHAOS_RUN="$TEST_TMP" WITNESS_DIR="$WD" "$RLOCK" run -w 30s C1 --ttl "$TTL" -- \
        "$WITNESS" --hold "0.0$(( RANDOM % 4 + 1 ))" --tag "w$w.$i" 2>>"$TEST_TMP/err.$w" \
        || fails=$((fails + 1))
    done
    echo "$fails" >"$TEST_TMP/done.$w"
  ) &
  _pids+=($!)
done
all_done() { local w; for w in $(seq 1 $WORKERS); do [ -s "$TEST_TMP/done.$w" ] || return 1; done; }
check "the $WORKERS workers finish within 90s" wait_until 90 all_done
echo "  $((WORKERS * RUNS)) runs took $(( $(ms) - t0 ))ms"
fails=$(cat "$TEST_TMP"/done.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
check "every run exited 0 ($fails did not)" test "$fails" = 0
[ "$fails" = 0 ] || head -3 "$TEST_TMP"/err.*
oracle
check "all $((WORKERS * RUNS)) critical sections ran (starts $O_starts, ends $O_ends)" \
  test "$O_starts" = $((WORKERS * RUNS)) -a "$O_ends" = $((WORKERS * RUNS))
check "zero overlaps (got $O_overlaps)" test "$O_overlaps" = 0
check "the counter is exact: $((WORKERS * RUNS)) (got $O_counter, $O_lost_updates lost updates)" test "$O_counter" = $((WORKERS * RUNS))
check "fences strictly increase in acquisition order ($O_fence_violations violations)" test "$O_fence_violations" = 0
check "no stale write, refused or accepted ($O_stale_rejected refused, $O_stale_accepted accepted)" \
  test "$O_stale_rejected" = 0 -a "$O_stale_accepted" = 0
oracle_details
first=$(grep '^START ' "$WD/events" | sed 's/.* fence=\([0-9]*\).*/\1/' | sort -n | head -n1)
fence=$(rcli GET "redisson_lock_token:{C1}")
check "one fencing token per fresh acquisition: $((WORKERS * RUNS)) tokens from $first to $fence" \
  test "$(( fence - first + 1 ))" = $((WORKERS * RUNS))
hygiene_checks contention
finish
