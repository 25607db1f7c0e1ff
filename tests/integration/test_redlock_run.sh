#!/usr/bin/env bash
# Redlock `run` over 3 masters: one master killed mid-run does not stop CMD (exit
# = CMD's status); two killed stop CMD and exit 76 before the TTL since the last
# confirmed renewal; a master restarted empty gets the lock back by the next
# renewal (within the TTL); a waiter (-w) is woken by the holder's release; CMD's
# environment has RLOCK_FENCE (the max fence) and RLOCK_URL (the list, no passwords).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
. "$(dirname "$0")/topology.sh"
redlock_setup 3
all_three() { [ "$(nodes_with_key "$1")" = "0 1 2 " ]; }
envval() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1; }

# ------------------------------------------------------------------ one master killed
T=$TEST_TMP/r1
bg "$T" "${TO[@]}" run R1 --ttl 3s -- sh -c '
  env | grep "^RLOCK_" >"$1.env"
  sleep 4
  date +%s%3N >"$1.cmdend"' sh "$T"
check "R1 is held on all three masters" wait_until 3 all_three R1
check "CMD wrote its environment" wait_until 3 has_file "$T.env"
fence=$(envval "$T.env" RLOCK_FENCE)
check "RLOCK_FENCE ($fence) is the fence on every node ($(fence_on 0 R1) $(fence_on 1 R1) $(fence_on 2 R1))" \
  test -n "$fence" -a "$(fence_on 0 R1) $(fence_on 1 R1) $(fence_on 2 R1)" = "$fence $fence $fence"
check "RLOCK_URL in CMD's environment is the comma list ($(envval "$T.env" RLOCK_URL))" \
  test "$(envval "$T.env" RLOCK_URL)" = "$REDLOCK_URLS"
OWN=$(lock_owner_on 0 R1)
sleep 0.5
stop_master 2
t_kill=$(ms)
# the lock stays held on the two live nodes while CMD runs: PTTL sampled, each
# sample stamped after its reply and judged only if it was taken before CMD's own
# end marker (rlock releases right after CMD ends, so a later sample may read -2)
for i in $(seq 1 60); do
  [ -e "$T.cmdend" ] && break
  for m in 0 1; do
    p=$(mcli "$m" PTTL R1)
    echo "$(ms) $m $p"
  done
  sleep 0.1
done >"$T.pttl"
check "the run ends" wait_until 8 bg_done "$T"
cmd_end=$(cat "$T.cmdend" 2>/dev/null || echo 0)
n=$(awk -v e="$cmd_end" '$1 < e' "$T.pttl" | wc -l)
bad=$(awk -v e="$cmd_end" '$1 < e && !($3 ~ /^[0-9]+$/ && $3 > 0)' "$T.pttl" | head -n 3 | paste -sd' ')
check "R1 stayed held on masters 0 and 1 after master 2 died ($n samples, bad: ${bad:-none})" test "$n" -gt 10 -a -z "$bad"
check "one of 3 killed: run exits with CMD's status 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "CMD ran to its end" has_file "$T.cmdend"
check "R1 is released on the live masters" wait_until 2 eval '[ -z "$(nodes_with_key R1 0 1 | tr -d " ")" ]'
[ -s "$T.err" ] && sed 's/^/  run stderr: /' "$T.err" | head -n 5
restart_master_empty 2

# ------------------------------------------------------------------ two masters killed
T=$TEST_TMP/r2
bg_long_run "$T" R2
cmd_pid=$CMD_PID
check "R2 is held on all three masters" wait_until 3 all_three R2
# kill right after a renewal (PTTL jumps up on master 0): from then the run has
# less than the 3s TTL before it must have stopped CMD
prev=$(mcli 0 PTTL R2); renewed=no
for i in $(seq 1 60); do
  p=$(mcli 0 PTTL R2)
  if [[ $p =~ ^[0-9]+$ && $prev =~ ^[0-9]+$ ]] && [ "$p" -gt $((prev + 300)) ]; then renewed=yes; break; fi
  prev=$p; sleep 0.03
done
t_ren=$(ms)
check "a renewal reached master 0 (PTTL $prev -> $p)" test "$renewed" = yes
stop_master 1; stop_master 2
echo "  masters 1 and 2 killed $(( $(ms) - t_ren ))ms after the renewal was seen"
expect_lost_run "$T" "$cmd_pid" "$t_ren" "two of three masters killed"
check "stopped before the 3s TTL since the last confirmed renewal (${LOST_MS}ms in 0..2999)" between "$LOST_MS" 0 2999
check "stderr says the lock was lost" grep -q '^rlock: .*lost' "$T.err"
echo "  R2 on master 0 afterwards: EXISTS $(mcli 0 EXISTS R2)"
restart_master_empty 1; restart_master_empty 2
del_on R2

# ------------------------------------------------------------------ a majority says gone / other owner
T=$TEST_TMP/r4
bg_long_run "$T" R4
cmd_pid=$CMD_PID
check "R4 is held on all three masters" wait_until 3 all_three R4
sleep 0.3
t_del=$(ms)
mcli 1 DEL R4 >/dev/null
mcli 2 DEL R4 >/dev/null
foreign_lock 2 R4 other:1 30000
expect_lost_run "$T" "$cmd_pid" "$t_del" "R4 deleted on master 1 and taken by another owner on master 2"
check "stopped within the TTL (${LOST_MS}ms in 0..2999)" between "$LOST_MS" 0 2999
check "the other owner's lock on master 2 is untouched" test "$(mcli 2 HGET R4 other:1)" = 1 -a "$(mcli 2 HLEN R4)" = 1
check "R4 was not re-created on master 1" test "$(mcli 1 EXISTS R4)" = 0
del_on R4

# CMD's exit status is the run's
r "${TO[@]}" run R5 --ttl 3s -- sh -c 'exit 7'
expect_rc 7 "run -- sh -c 'exit 7': the run exits 7"
check "R5 is released on every master" test -z "$(nodes_with_key R5 | tr -d ' ')"

# ------------------------------------------------------------------ a master restarted empty
T=$TEST_TMP/r3
bg "$T" "${TO[@]}" run R3 --ttl 3s -- sh -c 'sleep 5; date +%s%3N >"$1.cmdend"' sh "$T"
check "R3 is held on all three masters" wait_until 3 all_three R3
OWN=$(lock_owner_on 0 R3)
sleep 0.4
run_id() { mcli "$1" INFO server | tr -d '\r' | sed -n 's/^run_id://p'; }
rid=$(run_id 1)
restart_master_empty 1
t_r=$(ms)
# (A renewal may already have put R3 back: the new run_id proves the restart.)
check "master 1 restarted empty (a new server: run_id $(run_id 1) after $rid)" test "$(run_id 1)" != "$rid"
check "master 1 has R3 again" wait_until 5 held_everywhere R3 "$OWN" 1
d=$(( $(ms) - t_r ))
# The next renewal (due within TTL/3 = 1s) puts it back; an idle machine sees
# ~1s. The bound is the TTL: back before the lease it renews could end.
check "back by the next renewal, within the 3s TTL of the restart (${d}ms)" test "$d" -le 3000
p=$(mcli 1 PTTL R3)
check "its lease on master 1 is the run's (PTTL $p in 1..3000)" eval '[[ $p =~ ^[0-9]+$ ]] && between "$p" 1 3000'
check "the run ends" wait_until 8 bg_done "$T"
check "run exits with CMD's status 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "CMD ran to its end" has_file "$T.cmdend"
check "R3 is released on every master" wait_until 2 eval '[ -z "$(nodes_with_key R3 | tr -d " ")" ]'

# ------------------------------------------------------------------ a waiter woken by the release
r "${TO[@]}" acquire W --ttl 60s --owner holder
expect_rc 0 "the holder takes W for 60s"
T=$TEST_TMP/w1
bg "$T" "${TO[@]}" acquire W -w 10s --ttl 30s --owner waiter
sleep 1.5
check "the waiter is still waiting" test ! -e "$T.rc"
t_rel=$(ms)
r "${TO[@]}" release W --owner holder
expect_rc 0 "the holder releases W"
check "the waiter ends" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t_rel ))
check "the waiter got W (exit $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
# Only the release message wakes it this early: otherwise it would wait for
# the holder's 60s lease or end at its -w 10s (an idle machine sees ~10ms).
check "woken by the release, long before the lease or -w could (${d}ms < 5000)" between "$d" 0 4999
n=$(held_on W waiter)
# (it may have tried a node before the holder's release reached it: a majority is what counts)
check "W is the waiter's on a majority of the masters ($n of 3)" test "$n" -ge 2
r "${TO[@]}" release W --owner waiter

# ------------------------------------------------------------------ no passwords in CMD's RLOCK_URL
for i in 0 1 2; do mcli "$i" CONFIG SET requirepass s3cret >/dev/null; done
PW_URLS=$(for i in 0 1 2; do printf 'redis://:s3cret@127.0.0.1:%s,' "${MASTER_PORTS[$i]}"; done)
PW_URLS=${PW_URLS%,}
T=$TEST_TMP/pw
BG_ENV=(RLOCK_URL="$PW_URLS")
bg "$T" "${TO[@]}" run PW --ttl 3s -- sh -c 'env | grep "^RLOCK_" >"$1.env"' sh "$T"
BG_ENV=()
check "the run with passwords ends" wait_until 5 bg_done "$T"
check "exit 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
u=$(envval "$T.env" RLOCK_URL)
check "RLOCK_URL has no password ($u)" test -n "$u" -a "${u/s3cret/}" = "$u"
check "RLOCK_URL names the three masters" test "$(tr , '\n' <<<"$u" | grep -c -e ":${MASTER_PORTS[0]}" -e ":${MASTER_PORTS[1]}" -e ":${MASTER_PORTS[2]}")" = 3
check "the password is in no 'rlock' output" eval '! grep -q s3cret "$T.err" "$T.out"'

finish
