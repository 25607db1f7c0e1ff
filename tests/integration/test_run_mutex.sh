#!/usr/bin/env bash
# run excludes: 4 parallel workers x 25 runs of a read-sleep-write critical
# section on one lock end with the counter at exactly 100 and no two logged
# critical sections overlapping in time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

S=$TEST_TMP/stress
mkdir -p "$S"
echo 0 >"$S/counter"
: >"$S/log"
body='s=$(date +%s%N); c=$(cat "$1/counter"); sleep 0.005; echo $((c + 1)) >"$1/counter"; e=$(date +%s%N); echo "$s $e $2" >>"$1/log"'
t0=$(ms)
for w in 1 2 3 4; do
  (
    fails=0
    for i in $(seq 1 25); do
      "$RLOCK" run -w 60s STRESS -- sh -c "$body" sh "$S" "$w.$i" 2>>"$S/err.$w" || fails=$((fails + 1))
    done
    echo "$fails" >"$S/done.$w"
  ) &
  _pids+=($!)
done
all_done() { [ -s "$S/done.1" ] && [ -s "$S/done.2" ] && [ -s "$S/done.3" ] && [ -s "$S/done.4" ]; }
check "the 4 workers finish within 60s" wait_until 60 all_done
d=$(( $(ms) - t0 )); echo "  100 runs by 4 workers took ${d}ms"
fails=$(cat "$S"/done.* 2>/dev/null | awk '{s += $1} END {print s + 0}')
check "every run exited 0 ($fails failed)" test "$fails" = 0
[ "$fails" = 0 ] || head -5 "$S"/err.* 2>/dev/null
check "the counter is exactly 100 (got $(cat "$S/counter"))" test "$(cat "$S/counter")" = 100
check "100 critical sections were logged (got $(wc -l <"$S/log"))" test "$(wc -l <"$S/log")" = 100
overlaps=$(sort -n -k1,1 "$S/log" | awk 'NR > 1 && $1 < prev_end {n++; if (n <= 3) printf "%s overlaps %s; ", $3, prev_id} {prev_end = $2; prev_id = $3} END {print n + 0}')
check "no two critical sections overlap ($overlaps)" test "${overlaps##*; }" = 0
check "STRESS is free at the end" key_gone STRESS

finish
