#!/usr/bin/env bash
# Several names: `acquire A B C` and `run A B C -- CMD` take all or none in one
# fixed order (bytewise), renew all, release all; RLOCK_NAME and RLOCK_FENCE list
# names and tokens comma-separated in the order given; two runs naming the same
# locks in opposite orders never deadlock and never overlap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

owner_of() { rcli HKEYS "$1" | grep -v '^rlock:meta$' | head -n1; }

# --- acquire / renew / release of three names
r acquire S3 S1 S2 --ttl 20s
expect_rc 0 "acquire of three names"
TOK=$OUT
check "one token printed (${TOK})" test "$(printf '%s\n' "$OUT" | wc -l)" = 1
check "all three held by that token" test "$(owner_of S1) $(owner_of S2) $(owner_of S3)" = "$TOK $TOK $TOK"
f1=$(rcli GET 'redisson_lock_token:{S1}'); f2=$(rcli GET 'redisson_lock_token:{S2}')
check "each name took its own fencing token ($f1, $f2)" test -n "$f1" -a -n "$f2"
r renew S1 S2 S3 --owner "$TOK" --ttl 40s
expect_rc 0 "renew of three names"
check "every lease is 40s now" test "$(rcli PTTL S1)" -gt 30000 -a "$(rcli PTTL S3)" -gt 30000
r renew S1 S2 S3 --owner "$TOK" --json
expect_rc 0 "renew --json of three names"
check "renew --json lists each lock" test "$(jget "$OUT" locks.2.name)" = S3

# --- all or none: one busy name leaves none of the others taken
r acquire X1 --owner other
expect_rc 0 "another owner takes X1"
r acquire X0 X1 X2 -n
expect_rc 75 "acquire X0 X1 X2 with X1 busy"
check "busy names the busy lock" grep -q '"X1"' <<<"$ERR"
check "X0 and X2 are not left held (all or none)" test "$(rcli EXISTS X0 X2)" = 0
r acquire X0 X1 X2 -w 1s --json
expect_rc 75 "acquire -w 1s with X1 busy for longer"
check "busy --json names X1" test "$(jget "$OUT" name)" = X1
check "X0 and X2 are free after the wait ran out" test "$(rcli EXISTS X0 X2)" = 0

# --- release of several: each one independently; one not held -> exit 1, the others released
r release S1 S2 S3 X1 --owner "$TOK" --json
expect_rc 1 "release of S1 S2 S3 and someone else's X1"
check "S1 S2 S3 released anyway" test "$(rcli EXISTS S1 S2 S3)" = 0
check "X1 untouched" test "$(owner_of X1)" = other
check "release --json lists each lock" test "$(jget "$OUT" locks.3.released)" = false

# --- run: environment, renewal of every lock, release of every lock
T=$TEST_TMP/env
r run --ttl 1500ms R2 R1 R3 -- sh -c 'echo "$RLOCK_NAME|$RLOCK_FENCE" >"$1"; sleep 2.5' sh "$T"
expect_rc 0 "run over three names (2.5s, beyond one 1.5s lease)"
IFS='|' read -r names fences <"$T"
check "RLOCK_NAME lists the names in the order given ($names)" test "$names" = "R2,R1,R3"
IFS=, read -r g2 g1 g3 <<<"$fences"
check "RLOCK_FENCE lists each lock's token in that order ($fences)" \
  test "$g2" = "$(rcli GET 'redisson_lock_token:{R2}')" -a "$g1" = "$(rcli GET 'redisson_lock_token:{R1}')" \
  -a "$g3" = "$(rcli GET 'redisson_lock_token:{R3}')"
check "every lock is released after the run" test "$(rcli EXISTS R1 R2 R3)" = 0

# --- run loses one of its locks: CMD is stopped, exit 76, the others released
T=$TEST_TMP/lost
bg "$T" run --ttl 1500ms L1 L2 -- sleep 20
check "both held by the run" wait_until 5 eval '[ "$(rcli EXISTS L1 L2)" = 2 ]'
rcli DEL L2 >/dev/null
check "the run ends" wait_until 5 bg_done "$T"
check "run exits 76 when one of its locks is lost (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "stderr names the lost lock" grep -q '"L2"' "$T.err"
check "L1 released too" wait_until 2 key_gone L1

# --- opposite orders: no deadlock, no overlap
LOG=$TEST_TMP/crit.log
: >"$LOG"
for i in 1 2 3 4; do
  bg "$TEST_TMP/ab$i" run -w 30s --ttl 2s P Q -- sh -c 'echo "in $(date +%s%N) $1" >>"$2"; sleep 0.2; echo "out $(date +%s%N) $1" >>"$2"' sh "ab$i" "$LOG"
  bg "$TEST_TMP/ba$i" run -w 30s --ttl 2s Q P -- sh -c 'echo "in $(date +%s%N) $1" >>"$2"; sleep 0.2; echo "out $(date +%s%N) $1" >>"$2"' sh "ba$i" "$LOG"
done
RUNS=()
for i in 1 2 3 4; do RUNS+=("$TEST_TMP/ab$i" "$TEST_TMP/ba$i"); done
all_done() { local f; for f in "${RUNS[@]}"; do bg_done "$f" || return 1; done; }
check "8 runs over P Q in opposite orders all finish (no deadlock)" wait_until 40 all_done
bad=0
for f in "${RUNS[@]}"; do
  [ "$(bg_rc "$f")" = 0 ] && continue
  bad=$((bad + 1))
  echo "  ${f##*/}: rc $(bg_rc "$f"): $(head -c 300 "$f.err")"
done
check "all 8 exit 0 ($bad did not)" test "$bad" = 0
check "8 critical sections logged" test "$(grep -c '^in ' "$LOG")" = 8
overlap=$(sort -k2,2n "$LOG" | awk '$1 == "in" { n++; if (n > m) m = n } $1 == "out" { n-- } END { print m + 0 }')
check "never two inside at once (max $overlap)" test "$overlap" = 1

# --- force-unlock of the other layouts wakes their waiters at once (not at the lease end)
r acquire FU-RW --write --ttl 60s
expect_rc 0 "a 60s write lock"
bg "$TEST_TMP/fu-rw" run -s -w 20s FU-RW -- true
check "a reader waits on redisson_rwlock:{FU-RW}" wait_until 5 eval '[ "$(rcli PUBSUB NUMSUB "redisson_rwlock:{FU-RW}" | sed -n 2p)" = 1 ]'
t0=$(ms)
r force-unlock FU-RW
expect_rc 0 "force-unlock of a read-write lock"
check "the waiting reader got in and finished" wait_until 5 bg_done "$TEST_TMP/fu-rw"
check "within 2s of the force-unlock, not at the lease end ($(( $(bg_t "$TEST_TMP/fu-rw") - t0 ))ms)" \
  test $(( $(bg_t "$TEST_TMP/fu-rw") - t0 )) -lt 2000
r acquire FU-SEM --limit 1 --ttl 60s
expect_rc 0 "a 60s permit of a 1-permit semaphore"
SEM_TOK=$OUT
bg "$TEST_TMP/fu-sem" run --limit 1 -w 20s FU-SEM -- true
check "a permit waiter waits on redisson_sc:{FU-SEM}" wait_until 5 eval '[ "$(rcli PUBSUB NUMSUB "redisson_sc:{FU-SEM}" | sed -n 2p)" = 1 ]'
t0=$(ms)
r force-unlock FU-SEM
expect_rc 0 "force-unlock of a semaphore"
# The woken waiter may already hold its own permit here: look for the first owner's.
check "the first owner's permit is gone" \
  eval '! { rcli ZRANGE "{FU-SEM}:timeout" 0 -1; rcli HKEYS "rlock_permits:{FU-SEM}"; } | grep -qF "$SEM_TOK"'
check "the permit waiter got in and finished" wait_until 5 bg_done "$TEST_TMP/fu-sem"
check "its permits and records are gone once the waiter is done" \
  test "$(rcli EXISTS '{FU-SEM}:timeout' 'rlock_permits:{FU-SEM}')" = 0
check "within 2s of the force-unlock ($(( $(bg_t "$TEST_TMP/fu-sem") - t0 ))ms)" test $(( $(bg_t "$TEST_TMP/fu-sem") - t0 )) -lt 2000
check "both waiters exit 0 ($(bg_rc "$TEST_TMP/fu-rw") $(bg_rc "$TEST_TMP/fu-sem"))" \
  test "$(bg_rc "$TEST_TMP/fu-rw") $(bg_rc "$TEST_TMP/fu-sem")" = "0 0"

finish
