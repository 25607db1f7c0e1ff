#!/usr/bin/env bash
# Chaos 7 - memory pressure evicts held locks (maxmemory + volatile-lru; the
# locks are the only keys with an expiry, so they are what gets evicted). 5
# rounds x 4 holders: each loss is detected and the command stopped by the next
# renewal (within DETECT_MS, chaos_lib.sh), and the run exits 76.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

HOLDERS=4 ROUNDS=5
BOUND=$DETECT_MS
for round in $(seq 1 $ROUNDS); do
  start_holders "E$round" $HOLDERS
  used=$(rcli INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p')
  rcli CONFIG SET maxmemory-policy volatile-lru >/dev/null
  rcli CONFIG SET maxmemory $((used + 64 * 1024)) >/dev/null
  t=$(ms)
  # Keys without an expiry fill the memory; only the locks can be evicted.
  for j in $(seq 1 8); do
    rcli SET "filler:$round:$j" "$(head -c 40000 /dev/zero | tr '\0' x)" >/dev/null 2>&1
  done
  evicted=0
  for name in "${H_NAMES[@]}"; do key_gone "$name" && evicted=$((evicted + 1)); done
  record evicted "$([ "$evicted" = $HOLDERS ] && echo 1 || echo 0)" "round $round: $evicted of $HOLDERS"
  wait_until 10 holders_done
  rcli CONFIG SET maxmemory 0 >/dev/null
  rcli CONFIG SET maxmemory-policy noeviction >/dev/null
  rcli DEL $(rcli --scan --pattern 'filler:*') >/dev/null
  judge_detection evict "$t" $BOUND
done
verdict started "every holder's command started"
verdict evicted "the memory pressure evicted every held lock"
verdict detected_evict "each eviction was detected and the command stopped within ${BOUND}ms ($(summary after_evict ms))"
verdict exit76_evict "each run exited 76"
hygiene_checks eviction
finish
