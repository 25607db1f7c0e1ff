#!/usr/bin/env bash
# Redlock safety over 3 masters.
# (a) 4 workers x 5 `run -w` of one lock, each CMD the chaos suite's witness (a
#     flock(LOCK_EX|LOCK_NB) critical section, a read-sleep-write counter and a
#     fenced resource), one master restarted empty in the middle (while the
#     holder has the lock on all three): no overlap, no lost update, fences
#     increasing in START order, no stale write accepted.
# (b) replies of 2 of the 3 masters delayed (tests/chaos/proxy.py, delay-down):
#     by 80% of the TTL, and by less than the per-node timeout. No acquisition
#     reports validity it does not have: it fails with 69 (nothing of its own left
#     on any node), or validity_ms <= TTL - the delay (the script's own reply came
#     that late) and <= what the masters that hold it have left. (Not TTL - the
#     whole wall time: the connections' handshakes, whose replies the proxy
#     delays too, come before the request that takes the lock, and a lease is
#     dated from that request's send: issue 41.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../chaos/chaos_lib.sh"
. "$(dirname "$0")/topology.sh"
redlock_setup 3
isnum() { [[ ${1:-} =~ ^-?[0-9]+$ ]]; }

# ------------------------------------------------------------------ (a) witness
new_witness_dir safe
WORKERS=4 ITER=5 BUDGET=90 # a bound on the test, not a promise: 20 short runs take ~8s idle
worker_case() { # CASE: one run of the witness under the lock SAFE
  local c=$1 f=$TEST_TMP/s$1 hold rc
  hold=$(awk -v k="$((RANDOM % 3))" 'BEGIN { printf "%.1f", 0.1 + 0.25 * k }')
  env CHAOS_RUN="$TEST_TMP" WITNESS_DIR="$WD" "$RLOCK" "${TO[@]}" run SAFE --ttl 1.5s -w 20s -- \
    "$WITNESS" --hold "$hold" --tag "c$c" >"$f.out" 2>"$f.err" </dev/null
  rc=$?
  record rc "$([ "$rc" = 0 ] && echo 1 || echo 0)" "case $c: rc $rc $(head -c 200 "$f.err" | tr '\n' '|')"
}
t_start=$(ms)
for w in $(seq 1 $WORKERS); do
  (
    for k in $(seq 1 $ITER); do worker_case "$w.$k"; done
    touch "$TEST_TMP/worker.$w.done"
  ) &
  _pids+=($!)
done
starts() { grep -c '^START ' "$WD/events" 2>/dev/null || echo 0; }
enough_starts() { [ "$(starts)" -ge 6 ]; }
workers_done() { [ "$(ls "$TEST_TMP"/worker.*.done 2>/dev/null | wc -l)" -ge $WORKERS ]; }
wait_until 12 eval 'enough_starts || workers_done'
check "6 critical sections ran before the restart" enough_starts
# The restart comes while the current holder has SAFE on all three masters (as a
# renewal leaves it): it then keeps a majority. (A holder with a bare majority
# -- a waiter woken before the previous holder's release reached every node --
# that loses one of its two nodes to an empty restart loses the lock to the next
# waiter until its renewal notices: Redlock's known limit without persistence,
# which is why Redlock restarts a node only after a TTL.)
held_by_one_on_all() {
  local o0 o1 o2
  o0=$(lock_owner_on 0 SAFE); o1=$(lock_owner_on 1 SAFE); o2=$(lock_owner_on 2 SAFE)
  [ -n "$o0" ] && [ "$o0" = "$o1" ] && [ "$o1" = "$o2" ]
}
victim=$(( RANDOM % 3 ))
on_all=no
for i in $(seq 1 150); do
  held_by_one_on_all && { on_all=yes; break; }
  sleep 0.01
done
restart_master_empty "$victim"
echo "  master $victim restarted empty $(( $(ms) - t_start ))ms in, after $(starts) sections" \
  "(the holder had SAFE on all three: $on_all)"
left=$(( BUDGET - ($(ms) - t_start) / 1000 )); [ "$left" -lt 1 ] && left=1
check "$WORKERS workers x $ITER runs end within ${BUDGET}s" wait_until "$left" workers_done
echo "  the workers took $(( $(ms) - t_start ))ms"
oracle "$WD"
echo "  oracle: starts=$O_starts ends=$O_ends overlaps=$O_overlaps lost_updates=$O_lost_updates fence_violations=$O_fence_violations stale_accepted=$O_stale_accepted"
oracle_details 5
verdict rc "every run exits 0"
check "every critical section started and ended ($O_starts, $O_ends of $((WORKERS * ITER)))" \
  test "$O_starts" = $((WORKERS * ITER)) -a "$O_ends" = $((WORKERS * ITER))
check "zero overlapping critical sections ($O_overlaps)" test "$O_overlaps" = 0
check "no lost update ($O_lost_updates)" test "$O_lost_updates" = 0
check "fences increase in START order ($O_fence_violations violations)" test "$O_fence_violations" = 0
check "the fenced resource accepted no stale write ($O_stale_accepted)" test "$O_stale_accepted" = 0
check "SAFE is released on every master" wait_until 2 eval '[ -z "$(nodes_with_key SAFE | tr -d " ")" ]'
check "no rlock or witness is left" wait_until 3 no_chaos_procs

# ------------------------------------------------------------------ (b) delayed replies
proxy_master 1; proxy_master 2
DU="$(master_url 0),$(proxy_url 1),$(proxy_url 2)"
# delayed_case NAME TTL_MS DELAY_MS IO: acquire NAME through DU with replies of
# masters 1 and 2 delayed DELAY_MS; records the outcome as WHAT=dl_TTL_DELAY.
delayed_case() {
  local name=$1 ttl=$2 delay=$3 io=$4 what=dl_$2_$3 t0 wall v own
  own=own-$name
  proxy_set 1 delay-down "$delay"; proxy_set 2 delay-down "$delay"
  t0=$(ms)
  RLOCK_URL=$DU r --connect-timeout 500ms --io-timeout "$io" --json acquire "$name" --ttl "${ttl}ms" --owner "$own"
  wall=$(( $(ms) - t0 ))
  v=$(jget "$OUT" validity_ms 2>/dev/null)
  echo "  $name: TTL ${ttl}ms, replies of 2 of 3 delayed ${delay}ms: rc $RC in ${wall}ms, validity_ms ${v:-none}"
  case $RC in
    69)
      record "$what" 1 "$name: 69"
      record "${what}_clean" "$(wait_until 1 held_nowhere "$name" "$own" 0 1 2 && echo 1 || echo 0)" \
        "$name: ours on [$(for i in 0 1 2; do [ "$(mcli "$i" HEXISTS "$name" "$own")" = 1 ] && printf '%s ' "$i"; done)]"
      ;;
    0)
      # What the masters holding it have left, read past the proxies right after.
      local left=$ttl i p
      for i in 0 1 2; do
        p=$(mcli "$i" PTTL "$name")
        if [ "$(mcli "$i" HEXISTS "$name" "$own")" = 1 ] && isnum "$p" && [ "$p" -lt "$left" ]; then left=$p; fi
      done
      local since=$(( $(ms) - t0 - wall ))
      record "$what" "$(isnum "$v" && [ "$v" -le $((ttl - delay)) ] && [ "$v" -le $((left + since)) ] &&
        [ "$v" -gt 0 ] && echo 1 || echo 0)" \
        "$name: validity_ms ${v:-none} vs TTL - delay = $((ttl - delay)), the masters' lease left $left (+${since}ms)"
      proxy_set 1 pass; proxy_set 2 pass
      RLOCK_URL=$DU r --connect-timeout 500ms --io-timeout 2s release "$name" --owner "$own"
      ;;
    *) record "$what" 0 "$name: rc $RC $(head -c 200 <<<"$ERR")" ;;
  esac
  record "${what}_wall" 1 "$wall"
  proxy_set 1 pass; proxy_set 2 pass
  del_on "$name"
}
# 80% of a 2s TTL: the per-node timeout is min(I/O timeout, TTL/10) = 200ms
for k in 1 2 3 4 5; do delayed_case DL$k 2000 1600 2s; done
verdict dl_2000_1600 "replies delayed 80% of the TTL: 69, or validity_ms within what the masters hold"
if [ -n "$(values dl_2000_1600_clean)" ]; then
  verdict dl_2000_1600_clean "replies delayed 80% of the TTL, 69: nothing of ours left on any master"
fi
echo "  acquire wall time with 80% delays: $(summary dl_2000_1600_wall ms)"
# 600ms of a 10s TTL: within the 1s per-node timeout, the acquisition can hold,
# but its validity must count the 600ms
for k in 1 2 3; do delayed_case DM$k 10000 600 2s; done
verdict dl_10000_600 "replies delayed 600ms of a 10s TTL: 69, or validity_ms within what the masters hold"
n_ok=$(values dl_10000_600 | grep -c ': validity_ms')
echo "  $n_ok of 3 acquisitions with 600ms delays held; wall $(summary dl_10000_600_wall ms)"
if [ -n "$(values dl_10000_600_clean)" ]; then
  verdict dl_10000_600_clean "replies delayed 600ms, 69: nothing of ours left on any master"
fi
check "no rlock is left" wait_until 3 no_chaos_procs

finish
