#!/usr/bin/env bash
# Issue 41: a lease counts from the send of the request that took it, and
# rlock never acts on a lease that has ended.
#  (1) the server stopped longer than the lease while waiters wait, in every
#      mode: each waiter's grant comes from a send after the stall and counts
#      from it; CMD runs and the waiter exits 0 (was: every waiter 76);
#  (2) a reply delayed past the lease (a TCP proxy holds replies 1.5s, --ttl 1s):
#      `acquire` prints no token, exits 69 and leaves nothing held; `run` never
#      starts CMD; with -w the name is taken again, until the wait runs out
#      (was: the token printed, exit 0, on a lock that no longer existed);
#  (4) `run` whose lease ran out while rlock was stopped (SIGSTOP), CMD ending
#      meanwhile: exit 76 and one line saying when the lease ran out and how
#      long rlock did not run (was: CMD's 0, nothing said).
# (3), a silent Cluster seed, is test_topo_silent_seed.sh.
. "$(dirname "$0")/lib.sh"
start_redis
# unheld NAME: nobody holds NAME (a --limit semaphore's key stays: no permit out)
unheld() {
  if [ "$(rcli TYPE "$1")" = string ]; then [ "$(rcli ZCOUNT "{$1}:timeout" "($(server_ms)" +inf)" = 0 ]
  else key_gone "$1"; fi
}

# --- (4) rlock stopped past its lease while CMD ends
T=$TEST_TMP/p4
bg "$T" run P4 --ttl 1s -- sh -c 'sleep 2; echo done >"$1"' sh "$T.cmd"
check "run P4 holds it" wait_until 5 key_there P4
kill -STOP "$BG_PID"
check "CMD ends while rlock is stopped" wait_until 10 has_file "$T.cmd"
check "the key expired meanwhile" wait_until 5 key_gone P4
sleep 1
kill -CONT "$BG_PID"
check "the run ends" wait_until 10 bg_done "$T"
echo "  rc $(bg_rc "$T"); stderr: $(cat "$T.err")"
check "it exits 76 (the lease ran out before CMD's end was seen), not CMD's 0" test "$(bg_rc "$T")" = 76
check "one error line says the lock was lost" test "$(grep -c '^rlock: .*lock lost' "$T.err")" = 1
# (the usual turn: rlock is stopped in its wait and sees CMD's end first; a
# stop elsewhere in its loop stops the empty tree as unconfirmed instead, also 76)
if grep -q 'ran out' "$T.err"; then
  check "... when the lease ran out and how long rlock did not run" \
    grep -qE 'the lease ran out [0-9.]+m?s before .* rlock did not run for [0-9.]+s' "$T.err"
fi
check "nothing is released after the lease ended: the key stays gone" key_gone P4

# --- (2) replies delayed past the lease: a proxy in front of the server
proxy_start
PURL=$PROXY_URL
"$RLOCK" status warm >/dev/null 2>&1 # scripts cached: the acquisition is one EVALSHA

proxy_mode delay-down 1500
# (each case in the background, all at once: every request waits 1.5s)
MODES=("" --fair --write "--limit 2")
for mode in "${MODES[@]}"; do
  bg "$TEST_TMP/d${mode//[- ]/}" -u "$PURL" --io-timeout 10s acquire $mode --ttl 1s "D${mode//[- ]/}"
done
bg "$TEST_TMP/dab" -u "$PURL" --io-timeout 10s acquire --ttl 1s DA DB # several names: the late one too
bg "$TEST_TMP/dr" -u "$PURL" --io-timeout 10s run --ttl 1s DR -- touch "$TEST_TMP/dr.ran"
bg "$TEST_TMP/ds" -u "$PURL" --io-timeout 10s run --if-unavailable skip --ttl 1s DS -- touch "$TEST_TMP/ds.ran"
for f in "${MODES[@]/#/d}" dab dr ds; do
  f=$TEST_TMP/${f//[- ]/}
  check "$(basename "$f") ends" wait_until 40 bg_done "$f"
done
for mode in "${MODES[@]}"; do
  f=$TEST_TMP/d${mode//[- ]/}
  RC=$(bg_rc "$f") OUT=$(cat "$f.out") ERR=$(cat "$f.err")
  echo "  acquire $mode, reply 1.5s late on a 1s lease: rc $RC; $ERR"
  expect_rc 69 "acquire $mode: the answer came after the lease ended: 69"
  check "acquire $mode: no token printed" test -z "$OUT"
  check "acquire $mode: one error line" one_err_line
  check "acquire $mode: nothing held" wait_until 5 unheld "D${mode//[- ]/}"
done
check "acquire DA DB, answers late: 69 (got $(bg_rc "$TEST_TMP/dab"))" test "$(bg_rc "$TEST_TMP/dab")" = 69
check "DA DB: nothing held" eval 'key_gone DA && key_gone DB'
# run: CMD never starts
echo "  run, reply late: rc $(bg_rc "$TEST_TMP/dr"); $(cat "$TEST_TMP/dr.err")"
check "run, the answer came after the lease ended: 69" test "$(bg_rc "$TEST_TMP/dr")" = 69
check "run: CMD never started" test ! -e "$TEST_TMP/dr.ran"
check "run: nothing held" wait_until 5 key_gone DR
# run --if-unavailable skip: an answer too late is Redis unavailable: skipped, exit 0
check "run --if-unavailable skip, the answer came too late: skipped, 0" test "$(bg_rc "$TEST_TMP/ds")" = 0
check "run --if-unavailable skip: CMD never started" test ! -e "$TEST_TMP/ds.ran"
check "run --if-unavailable skip: nothing held" wait_until 5 key_gone DS
# -w: taken again while the wait lasts; the replies are late until 3s in
bg "$TEST_TMP/dw" -u "$PURL" --io-timeout 10s acquire -w 30s --ttl 1s DW
sleep 3
proxy_mode pass
check "acquire -w: it ends" wait_until 30 bg_done "$TEST_TMP/dw"
echo "  acquire -w, late replies then on time: rc $(bg_rc "$TEST_TMP/dw"); $(cat "$TEST_TMP/dw.err")"
check "acquire -w: taken again in time, exit 0" test "$(bg_rc "$TEST_TMP/dw")" = 0
check "acquire -w: the printed token holds DW" test "$(rcli HGET DW "$(cat "$TEST_TMP/dw.out")")" = 1
proxy_mode pass

# --- (1) the server stopped longer than the lease while waiters wait
MODES=("" --fair --write "--limit 1")
for i in "${!MODES[@]}"; do
  mode=${MODES[$i]}
  bg "$TEST_TMP/h$i" run $mode --ttl 2s S$i -- sleep 30
  check "holder $mode of S$i runs" wait_until 5 eval "[ \"\$(rcli EXISTS S$i)\" = 1 ]"
done
for i in "${!MODES[@]}"; do
  mode=${MODES[$i]}
  for w in 1 2; do
    bg "$TEST_TMP/w$i-$w" run -w 1m $mode --ttl 2s S$i -- sh -c 'echo ran >>"$1"; sleep 0.3' sh "$TEST_TMP/w$i.ran"
  done
done
sleep 0.5
kill -STOP "$REDIS_PID"
sleep 6
kill -CONT "$REDIS_PID"
for i in "${!MODES[@]}"; do
  mode=${MODES[$i]}
  check "holder $mode of S$i ends (its lease could not be confirmed)" wait_until 15 bg_done "$TEST_TMP/h$i"
  for w in 1 2; do
    f=$TEST_TMP/w$i-$w
    check "waiter $w $mode of S$i ends" wait_until 30 bg_done "$f"
    echo "  waiter $w $mode: rc $(bg_rc "$f"); $(grep -v 'warning' "$f.err" | head -2)"
    check "waiter $w $mode: its grant after the stall counts from its own send: exit 0, not 76" \
      test "$(bg_rc "$f")" = 0
  done
  check "both waiters $mode ran CMD" test "$(grep -c ran "$TEST_TMP/w$i.ran" 2>/dev/null)" = 2
  check "S$i is free after them" wait_until 5 unheld "S$i"
done

finish
