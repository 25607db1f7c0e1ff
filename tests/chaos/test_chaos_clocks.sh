#!/usr/bin/env bash
# Chaos 8 - wall clocks jump.
# (a) The Redis host's wall clock jumps forward 1h (an LD_PRELOAD shim shifts
#     redis-server's CLOCK_REALTIME; Redis expires keys by it) under 4 holders,
#     5 times (20 cases): their leases end at once; each loss is detected and the
#     command stopped by the next renewal (within DETECT_MS, chaos_lib.sh).
# (b) rlock's own wall clock jumps +1h and -1h while it holds a 1.5s lease for
#     3s (20 runs, 4 at a time): no effect at all. Every run exits 0, the lock
#     never disappears while its command runs (every EXISTS the server ran
#     between the command's recorded start and end found it; at least 10 such
#     samples), and nothing is logged.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
build_fakeclock || { echo "FAIL: cannot compile fakeclock.c (cc)"; exit 1; }
SERVER_CLOCK=$TEST_TMP/server.offset
set_offset "$SERVER_CLOCK" +0
REDIS_PRELOAD_ENV=(LD_PRELOAD="$FAKECLOCK_SO" FAKECLOCK_FILE="$SERVER_CLOCK")
start_redis
t_server=$(rcli TIME | head -n1)
check "the shim leaves the server's clock alone at +0 (TIME $t_server vs $(date +%s))" \
  test $(( t_server - $(date +%s) )) -le 1 -a $(( $(date +%s) - t_server )) -le 1

HOLDERS=4 ROUNDS=5
BOUND=$DETECT_MS
for round in $(seq 1 $ROUNDS); do
  start_holders "C$round" $HOLDERS
  t=$(ms)
  set_offset "$SERVER_CLOCK" "+$(( 3600 * round ))"
  wait_until 10 holders_done
  jumped=$(( $(rcli TIME | head -n1) - $(date +%s) ))
  record jumped "$([ "$jumped" -ge $(( 3600 * round - 2 )) ] && echo 1 || echo 0)" "round $round: server clock ${jumped}s ahead"
  judge_detection clock "$t" $BOUND
done
verdict started "every holder's command started"
verdict jumped "the server's clock jumped an hour further each round"
verdict detected_clock "server clock +1h: each loss detected and the command stopped within ${BOUND}ms ($(summary after_clock ms))"
verdict exit76_clock "server clock +1h: each run exited 76"

# (b) rlock's own clock. A fresh server with an honest clock. rlock loads the
# host's C library, so the shim (LD_PRELOAD) takes its clock_gettime.
set_offset "$SERVER_CLOCK" +0
redis_restart_empty 0
own_clock_case() {
  local c=$1 name=O$1 f=$TEST_TMP/o$1 clock=$TEST_TMP/o$1.offset
  set_offset "$clock" +0
  BG_ENV=(LD_PRELOAD="$FAKECLOCK_SO" FAKECLOCK_FILE="$clock")
  sampler_start "$f.samples" "$f.stop" EXISTS "$name"
  bg "$f" run --ttl "$TTL" "$name" -- sh -c "$STAMPED" "$f" 3
  wait_until 5 has_file "$f.start" || { record held 0 "case $c: the command never started"; touch "$f.stop"; return; }
  # rlock, the process started, is the one whose clock matters: it takes,
  # renews and releases the lock (CMD's guardian, a static program, only waits).
  local sup=$BG_PID
  record shim "$([ -n "$sup" ] && grep -q fakeclock "/proc/$sup/maps" 2>/dev/null && echo 1 || echo 0)" "case $c"
  # Jump rlock's clock while its command runs (3s, 1.5s lease: renewals every
  # 0.5s): +1h, then -1h, then back.
  sleep 0.5; set_offset "$clock" +3600
  sleep 0.7; set_offset "$clock" -3600
  sleep 0.6; set_offset "$clock" +0
  wait_until 10 bg_done "$f"
  touch "$f.stop"
  # Only samples the server ran between the command's start and end count: the
  # lock is taken before the one and released after the other.
  local judged gaps
  judged=$(samples_within "$f.samples" "$(cat "$f.start")" "$(cat "$f.end" 2>/dev/null || echo 0)")
  gaps=$(grep -cvx 1 <<<"$judged")
  # (what the other samples read, in the message: 0, the lock gone, or
  # "(error)", the sampler's own request that failed or timed out)
  record held "$([ "$gaps" = 0 ] && [ "$(grep -c . <<<"$judged")" -ge 10 ] && echo 1 || echo 0)" \
    "case $c: the lock was missing in $gaps of $(grep -c . <<<"$judged") samples (read: $(grep -vx 1 <<<"$judged" | sort | uniq -c | paste -sd, -))"
  record rc0 "$([ "$(bg_rc "$f")" = 0 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f")"
  record quiet "$([ ! -s "$f.err" ] && echo 1 || echo 0)" "case $c: $(head -c 200 "$f.err")"
}
lanes 4 20 60 own_clock_case
verdict shim "the clock shim is loaded into each rlock"
verdict held "rlock clock +1h/-1h: the lock never disappeared while its command ran"
verdict rc0 "rlock clock +1h/-1h: every run exited 0"
verdict quiet "rlock clock +1h/-1h: nothing on stderr"
hygiene_checks clocks
finish
