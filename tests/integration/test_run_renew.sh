#!/usr/bin/env bash
# run renews the lease: with --ttl 3s an 8s child keeps the lock the whole time
# (PTTL polled every 100ms stays > 0) and the PTTL goes back up at each renewal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

T=$TEST_TMP/r
t0=$(ms)
# CMD marks its end: a PTTL read while the marker is absent was taken while
# CMD ran, so the lock must be there. (rlock releases before it exits, so
# "rlock still running" is not the same as "the lock must be held".)
bg "$T" run R --ttl 3s -- sh -c "sleep 8; : >'$T.cmd-done'"
check "R is taken" wait_until 3 key_there R
: >"$T.pttl"
while ! bg_done "$T" && [ $(( $(ms) - t0 )) -lt 15000 ]; do
  p=$(rcli PTTL R)
  [ -e "$T.cmd-done" ] && break   # CMD ended: the release may have begun
  echo "$(( $(ms) - t0 )) $p" >>"$T.pttl"
  sleep 0.1
done
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(cat "$T.t") - t0 ))
check "the run exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "the run lasted the child's 8s (${d}ms between 7900 and 9500)" between "$d" 7900 9500
n=$(wc -l <"$T.pttl")
bad=$(awk '$2 <= 0' "$T.pttl" | head -3 | tr '\n' ';')
min=$(awk 'NR==1||$2<m{m=$2} END{print m}' "$T.pttl")
check "PTTL polled $n times during the run (>= 50)" test "$n" -ge 50
check "the lock never disappeared: PTTL always > 0 (min $min; bad: $bad)" test -z "$bad"
ups=$(awk 'NR>1 && $2 > prev + 300 {u++} {prev=$2} END{print u+0}' "$T.pttl")
check "PTTL went back up at renewals ($ups times, >= 5 in 8s at TTL/3 = 1s)" test "$ups" -ge 5
late=$(awk '$1 > 6000' "$T.pttl" | awk 'NR==1||$2>m{m=$2} END{print m+0}')
check "renewed late in the run: PTTL after 6s reached $late (> 2500)" test "$late" -gt 2500
check "min PTTL stays above TTL - TTL/3 - slack (min $min > 1500)" test "$min" -gt 1500
check "R is released at the end" key_gone R

finish
