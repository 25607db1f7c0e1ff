#!/usr/bin/env bash
# Chaos 7 - memory pressure evicts held locks (maxmemory + volatile-lru; the
# locks are the only keys with an expiry, so they are what gets evicted). 5
# rounds x 4 holders: each loss is detected and the command stopped within one
# renewal interval (TTL/3) plus the kill grace plus 300ms, and the run exits 76.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

HOLDERS=4 ROUNDS=5
BOUND=$(( TTL_MS / 3 + TTL_MS / 4 + 300 ))
for round in $(seq 1 $ROUNDS); do
  files=() witnesses=()
  for i in $(seq 1 $HOLDERS); do
    wd=$TEST_TMP/w-e$round.$i; mkdir -p "$wd"
    BG_ENV=(WITNESS_DIR="$wd")
    bg "$TEST_TMP/e$round.$i" run --ttl "$TTL" --kill-after 0.3s "E$round.$i" -- "$WITNESS" --hold 30 --tag h
    files+=("$TEST_TMP/e$round.$i")
  done
  for i in $(seq 1 $HOLDERS); do
    if wait_event START h 10 "$TEST_TMP/w-e$round.$i"; then
      witnesses+=("$EV_PID"); deathwatch "$EV_PID" "$TEST_TMP/e$round.$i.death"
    else
      witnesses+=("")
    fi
  done
  sleep_ms "$(rand_ms 0 400)"
  used=$(rcli INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p')
  rcli CONFIG SET maxmemory-policy volatile-lru >/dev/null
  rcli CONFIG SET maxmemory $((used + 64 * 1024)) >/dev/null
  t=$(ms)
  # Keys without an expiry fill the memory; only the locks can be evicted.
  for j in $(seq 1 8); do
    rcli SET "filler:$round:$j" "$(head -c 40000 /dev/zero | tr '\0' x)" >/dev/null 2>&1
  done
  evicted=0
  for i in $(seq 1 $HOLDERS); do key_gone "E$round.$i" && evicted=$((evicted + 1)); done
  record evicted "$([ "$evicted" = $HOLDERS ] && echo 1 || echo 0)" "round $round: $evicted of $HOLDERS"
  done_all() { local f; for f in "${files[@]}"; do bg_done "$f" || return 1; done; }
  wait_until 10 done_all
  rcli CONFIG SET maxmemory 0 >/dev/null
  rcli CONFIG SET maxmemory-policy noeviction >/dev/null
  rcli DEL $(rcli --scan --pattern 'filler:*') >/dev/null
  for i in $(seq 1 $HOLDERS); do
    f=$TEST_TMP/e$round.$i
    [ -n "${witnesses[$((i - 1))]}" ] || { record started 0 "round $round.$i"; continue; }
    record started 1 "round $round.$i"
    wait_until 5 has_file "$f.death"
    after=$(( $(cat "$f.death" 2>/dev/null || echo 99999999999999) - t ))
    record detected "$([ "$after" -le $BOUND ] && echo 1 || echo 0)" "round $round.$i: ${after}ms"
    record after_ms 1 "$after"
    record exit76 "$([ "$(bg_rc "$f")" = 76 ] && echo 1 || echo 0)" "round $round.$i: rc $(bg_rc "$f")"
  done
done
verdict started "every holder's command started"
verdict evicted "the memory pressure evicted every held lock"
verdict detected "each eviction was detected and the command stopped within ${BOUND}ms ($(summary after_ms ms))"
verdict exit76 "each run exited 76"
hygiene_checks eviction
finish
