#!/usr/bin/env bash
# run renews the lease: with --ttl 3s an 8s child keeps the lock the whole time
# (every PTTL the server ran while the child ran is > 0) and the PTTL goes back
# up at each renewal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

T=$TEST_TMP/r
# One sampler on one connection (every 50ms, each sample stamped when sent and
# when answered); CMD stamps its own start and end (STAMPED). Only samples the
# server ran between the two are judged: the lock is taken before CMD starts
# and released after it ends.
sampler_start "$T.pttl" "$T.stop" PTTL R
bg "$T" run R --ttl 3s -- sh -c "$STAMPED" "$T" 8
check "R is taken and CMD starts" wait_until 5 has_file "$T.start"
check "rlock exits" wait_until 15 bg_done "$T"
touch "$T.stop"
start=$(cat "$T.start"); end=$(cat "$T.end" 2>/dev/null || echo 0)
awk -v a="$start" -v b="$end" '$1 >= a && $2 <= b { print $1 - a, $3 }' "$T.pttl" >"$T.judged"
d=$(( $(cat "$T.t") - start ))
check "the run exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "rlock exited after its command's 8s (${d}ms after CMD started)" test "$d" -ge 7900 -a "$(cat "$T.t")" -ge "$end"
n=$(wc -l <"$T.judged")
bad=$(awk '$2 <= 0' "$T.judged" | head -3 | tr '\n' ';')
min=$(awk 'NR==1||$2<m{m=$2} END{print m}' "$T.judged")
check "PTTL sampled $n times while CMD ran (>= 40: one per 200ms at least)" test "$n" -ge 40
check "the lock never disappeared: PTTL always > 0 (min $min; bad: $bad)" test -z "$bad"
ups=$(awk 'NR>1 && $2 > prev + 300 {u++} {prev=$2} END{print u+0}' "$T.judged")
check "PTTL went back up at renewals ($ups times, >= 5 in 8s at TTL/3 = 1s)" test "$ups" -ge 5
late=$(awk '$1 > 6000' "$T.judged" | awk 'NR==1||$2>m{m=$2} END{print m+0}')
check "renewed late in the run: PTTL after 6s reached $late (> 2500)" test "$late" -gt 2500
# How low the lease ran between renewals (TTL - TTL/3 = 2000ms when every
# renewal is on time) is a figure, not a promise: a loaded machine delays the
# renewal thread; the promise is the PTTL > 0 above.
echo "  lowest PTTL while CMD ran: ${min}ms (2000ms when every renewal is on time); run took ${d}ms"
check "R is released at the end" key_gone R

finish
