#!/usr/bin/env bash
# Redlock: one busy master is busy, not "unavailable" (issue 19, defect 5).
# Masters A, B, D; D down; X holds Q on A and B (2 of 3); B paused (SIGSTOP).
# Y gets busy from A, a timeout from B, refused from D. Before the fix that was
# "quorum not reached" (69), and `run --if-unavailable run` ran CMD beside X.
# Now any busy answer in a round that is not held makes the result busy (75):
# plain acquire, acquire -w, run --if-unavailable run/skip, several names; and
# the same over 5 masters (busy from 1, 2 paused, 2 down).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
TO=(--connect-timeout 500ms --io-timeout 500ms)

start_masters 3 # 0=A 1=B 2=D
URLS=(-u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)")
stop_master 2
r "${URLS[@]}" "${TO[@]}" acquire Q --ttl 60s
expect_rc 0 "X takes Q on A and B (D down)"
X=$OUT
check "X holds Q on A and B" held_everywhere Q "$X" 0 1
freeze_master 1

ran=$TEST_TMP/ran
r "${URLS[@]}" "${TO[@]}" run --if-unavailable run -n Q -- touch "$ran"
expect_rc 75 "run --if-unavailable run: busy on A, B paused, D down"
check "CMD did not run beside X" test ! -e "$ran"
check "no 'RUNNING CMD WITHOUT THE LOCK' warning" eval '! grep -q "WITHOUT THE LOCK" <<<"$ERR"'
echo "  $ERR"
rm -f "$ran"
r "${URLS[@]}" "${TO[@]}" run --if-unavailable skip -n Q -- touch "$ran"
expect_rc 75 "run --if-unavailable skip: busy, not skipped as unavailable"
check "CMD did not run" test ! -e "$ran"
r "${URLS[@]}" "${TO[@]}" acquire Q
expect_rc 75 "plain acquire: busy"
r "${URLS[@]}" "${TO[@]}" --json acquire Q
expect_rc 75 "acquire --json: busy"
echo "  $OUT"
r "${URLS[@]}" "${TO[@]}" acquire Q -w 1200ms
expect_rc 75 "acquire -w 1200ms: still busy at the deadline"
rm -f "$ran"
r "${URLS[@]}" "${TO[@]}" run --if-unavailable run -n Q ZFREE -- touch "$ran"
expect_rc 75 "several names (Q busy, taken first in bytewise order): busy"
check "CMD did not run" test ! -e "$ran"
check "ZFREE was not left on A" eval '[ "$(mcli 0 EXISTS ZFREE)" = 0 ]'
# The busy name second: AFREE (first in bytewise order) finds no quorum, and Q,
# not tried yet, is tried once all the same: busy beats unavailable across the
# names too, so CMD does not run without its locks beside Q's holder.
rm -f "$ran"
r "${URLS[@]}" "${TO[@]}" run --if-unavailable run -n AFREE Q -- touch "$ran"
expect_rc 75 "several names (AFREE unavailable first, Q busy second): busy"
check "CMD did not run beside X" test ! -e "$ran"
check "AFREE was not left on A" eval '[ "$(mcli 0 EXISTS AFREE)" = 0 ]'
r "${URLS[@]}" "${TO[@]}" acquire AFREE ZFREE2
expect_rc 69 "several free names, no quorum: still unavailable"
check "nothing left on A" eval '[ "$(mcli 0 EXISTS AFREE ZFREE2)" = 0 ]'

# Nobody holds it anywhere: a majority unreachable is still unavailable (69),
# and --if-unavailable run does run CMD (unchanged).
rm -f "$ran"
r "${URLS[@]}" "${TO[@]}" run --if-unavailable run -n OTHER -- touch "$ran"
expect_rc 0 "a free name with a majority unreachable: --if-unavailable run runs CMD"
check "CMD ran (without the lock, as asked)" test -e "$ran"
rm -f "$ran"
r "${URLS[@]}" "${TO[@]}" acquire OTHER
expect_rc 69 "a free name with a majority unreachable: acquire is unavailable"
thaw_master 1

# 5 masters: X holds Q on 0,1,2 (3 and 4 down); 1 and 2 paused.
start_masters 5
U5=()
for i in "${MASTER_SET[@]}"; do U5+=(-u "$(master_url "$i")"); done
m=("${MASTER_SET[@]}")
stop_master "${m[3]}"; stop_master "${m[4]}"
r "${U5[@]}" "${TO[@]}" acquire Q --ttl 60s
expect_rc 0 "5 masters: X takes Q on 3 (2 down)"
freeze_master "${m[1]}"; freeze_master "${m[2]}"
rm -f "$ran"
r "${U5[@]}" "${TO[@]}" run --if-unavailable run -n Q -- touch "$ran"
expect_rc 75 "5 masters: busy from 1, 2 paused, 2 down: busy"
check "CMD did not run beside X" test ! -e "$ran"
thaw_master "${m[1]}"; thaw_master "${m[2]}"

# Several names with -w: J taken, K awaited (X holds it), then 2 of 3 masters
# die, so keeping J alive meanwhile gets no majority. K's holder still shows on
# the live master: busy (75), never "unavailable" (explorer, seed 7103 schedule
# 51: `run --if-unavailable run` ran CMD beside K's holder).
start_masters 3
U3=()
for i in "${MASTER_SET[@]}"; do U3+=(-u "$(master_url "$i")"); done
m=("${MASTER_SET[@]}")
r "${U3[@]}" "${TO[@]}" acquire K --ttl 60s
expect_rc 0 "3 masters: X takes K"
rm -f "$ran"
T=$TEST_TMP/jk
bg "$T" "${U3[@]}" "${TO[@]}" run --if-unavailable run -w 8s --ttl 1500ms J K -- touch "$ran"
y_took_j() { [ "$(mcli "${m[0]}" EXISTS J)$(mcli "${m[1]}" EXISTS J)$(mcli "${m[2]}" EXISTS J)" = 111 ]; }
check "Y takes J on every master and waits for K" wait_until 5 y_took_j
stop_master "${m[1]}"; stop_master "${m[2]}"
check "Y ends within 5s (keeping J alive fails at its next renewal, every 500ms)" wait_until 5 bg_done "$T"
check "Y is busy (75), not unavailable (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 75
check "CMD did not run beside X" test ! -e "$ran"
check "Y says why the wait ended" grep -q "could not keep the names taken alive while waiting for \"K\"" "$T.err"
echo "  $(tr '\n' '|' <"$T.err" | head -c 600)"
finish
