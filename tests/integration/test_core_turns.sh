#!/usr/bin/env bash
# Turns (issue 32, lua/lib/turns.lua): a release wakes one plain waiter, not all of
# them. Waiters queued behind an rlock hold listen on their own channel, the turns
# channel and the release channel (where they let '00' pass: issue 42; the first
# four only, the head, the others their own channel until told 'head'), and are
# served one a release, two script calls a handover (its acquisition and its
# release); Redisson's waiters still hear the release channel ('00', a 0 to
# Redisson); a waiter that died is skipped, one that dies after it was named is
# covered by the next one (k_turn_grace); a waiter that gives up leaves. (Every
# other way a lock is freed: test_core_wake_matrix.)
. "$(dirname "$0")/lib.sh"
start_redis

turns() { rcli ZCARD "rlock_turns:{$1}"; }
own_channels() { rcli PUBSUB CHANNELS "redisson_lock__channel:{$1}:*" | grep -v ':rlock:turns$' | grep -c .; }
main_subs() { rcli PUBSUB NUMSUB "redisson_lock__channel:{$1}" | sed -n 2p; }
evalsha_calls() { rcli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p'; }
queued_and_listening() { [ "$(turns "$1")" = "$2" ] && [ "$(own_channels "$1")" = "$2" ]; }

# warm-up: the scripts get loaded (NOSCRIPT + SCRIPT LOAD) here, not below
r acquire warm --owner w; r release warm --owner w

# --- five waiters behind an rlock hold: one release, each served in turn, two
# script calls a handover, in the order they came (the one that gives up first)
r acquire Q --ttl 60s --owner holder
expect_rc 0 "holder takes Q (ttl 60s)"
for i in 1 2 3 4 5; do
  bg "$TEST_TMP/q$i" run Q -w 30s -- sh -c "echo $i >>'$TEST_TMP/order'"
  wait_until 5 queued_and_listening Q "$i"
  sleep 0.1
done
check "five waiters queued for their turn in rlock_turns:{Q}" test "$(turns Q)" = 5
check "each listens on its own channel (five)" test "$(own_channels Q)" = 5
check "the first four (the head) listen on the release channel too (Redisson's unlock, a user without the turns' key), not the fifth" test "$(main_subs Q)" = 4
check "and on the turns channel (four)" test "$(rcli PUBSUB NUMSUB "redisson_lock__channel:{Q}:rlock:turns" | sed -n 2p)" = 4
check "the holder's record says its release names the turns" grep -q '"turns":1' <<<"$(rcli HGET Q rlock:meta)"
sleep 0.3
rcli CONFIG RESETSTAT >/dev/null
r release Q --owner holder
expect_rc 0 "holder releases Q"
for i in 1 2 3 4 5; do
  check "waiter $i ran CMD and exited 0" wait_until 10 bg_done "$TEST_TMP/q$i"
  check "waiter $i: rc 0" test "$(bg_rc "$TEST_TMP/q$i")" = 0
done
calls=$(evalsha_calls)
echo "  EVALSHA after the release: $calls (release 1 + 5 acquisitions + 5 releases = 11)"
check "two script calls a handover, none from waiters whose turn it was not ($calls = 11)" test "$calls" = 11
check "served in the order they came: $(paste -sd' ' "$TEST_TMP/order")" test "$(paste -sd' ' "$TEST_TMP/order")" = "1 2 3 4 5"
check "the turns' set is gone with the last waiter" test "$(rcli EXISTS "rlock_turns:{Q}")" = 0
check "Q is free" test "$(rcli EXISTS Q)" = 0

# --- Redisson's waiters still hear every release: '00' on the release channel when a
# turn was given (Redisson's LongCodec reads it as 0, its unlock message), '0' otherwise
r acquire R --ttl 60s --owner holder
subscribe 'redisson_lock__channel:{R}' "$TEST_TMP/rsub"
bg "$TEST_TMP/r1" run R -w 30s -- true
check "an rlock waiter is queued for R" wait_until 5 queued_and_listening R 1
r release R --owner holder
check "the rlock waiter ran" wait_until 10 bg_done "$TEST_TMP/r1"
check "the Redisson subscriber got '00' for the release that named the rlock waiter" got_msg "$TEST_TMP/rsub" 'redisson_lock__channel:{R}' 00
check "and '0' for that waiter's own release (nobody queued)" wait_until 3 got_msg "$TEST_TMP/rsub" 'redisson_lock__channel:{R}' 0
kill "$SUBPID" 2>/dev/null

# --- behind a Redisson hold (no rlock record: its unlock says '0' on the release
# channel only), a queued waiter listens there too, and wakes on Redisson's unlock
ROWNER=8743c9c0-0795-4907-87fd-6c719a6b4586:1
rcli HSET RS "$ROWNER" 1 >/dev/null; rcli PEXPIRE RS 60000 >/dev/null
bg "$TEST_TMP/rs" run RS -w 30s -- true
check "the waiter behind Redisson's hold listens on the release channel" wait_until 5 eval '[ "$(main_subs RS)" = 1 ]'
check "and on its own" test "$(own_channels RS)" = 1
t_rel=$(ms)
rcli DEL RS >/dev/null; rcli PUBLISH 'redisson_lock__channel:{RS}' 0 >/dev/null
check "Redisson's unlock woke it" wait_until 5 bg_done "$TEST_TMP/rs"
d=$(( $(bg_t "$TEST_TMP/rs") - t_rel ))
check "at the unlock, not the 60s lease end (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))

# --- a waiter killed while queued: the release finds nobody listening on its
# channel, drops it and names the next one
r acquire K --ttl 60s --owner holder
bg "$TEST_TMP/k1" run K -w 30s -- true
wait_until 5 queued_and_listening K 1
sleep 0.1
bg "$TEST_TMP/k2" run K -w 30s -- true
check "two waiters queued for K" wait_until 5 queued_and_listening K 2
kill -KILL "$(cat "$TEST_TMP/k1.pid")"
check "the first waiter's channel is gone with it" wait_until 5 eval '[ "$(own_channels K)" = 1 ]'
t_rel=$(ms)
r release K --owner holder
check "the second waiter ran" wait_until 10 bg_done "$TEST_TMP/k2"
d=$(( $(bg_t "$TEST_TMP/k2") - t_rel ))
check "named at the release, past the dead one (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
check "the dead waiter is out of the turns" test "$(rcli EXISTS "rlock_turns:{K}")" = 0

# --- the three waiters a release tries first were all killed while queued: it
# tells the live one after them it is next (it tries k_turn_grace later), not
# leaving it to sleep until the 60s lease end it saw
r acquire D --ttl 60s --owner holder
for i in 1 2 3 4; do
  bg "$TEST_TMP/d$i" run D -w 30s -- true
  wait_until 5 queued_and_listening D "$i"
  sleep 0.05
done
check "four waiters queued for D" queued_and_listening D 4
for i in 1 2 3; do kill -KILL "$(cat "$TEST_TMP/d$i.pid")"; done
check "the three first waiters' channels are gone with them" wait_until 5 eval '[ "$(own_channels D)" = 1 ]'
t_rel=$(ms)
r release D --owner holder
check "the fourth waiter ran" wait_until 10 bg_done "$TEST_TMP/d4"
t_d4=$(bg_t "$TEST_TMP/d4")
[ "$t_d4" -gt 0 ] || t_d4=$(( t_rel + 999999 )) # not run: no time to compare
d=$(( t_d4 - t_rel ))
check "told at the release, past three dead ones (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
check "rc 0" test "$(bg_rc "$TEST_TMP/d4")" = 0
check "the dead waiters are out of the turns" test "$(rcli EXISTS "rlock_turns:{D}")" = 0

# --- a waiter named that never takes the lock (it died just after it heard its
# turn: here a subscriber that only listens): the next one tries k_turn_grace
# (200ms) later, not at the 60s lease end it saw
r acquire N --ttl 60s --owner holder
bg "$TEST_TMP/n2" run N -w 30s -- true
check "a waiter is queued for N" wait_until 5 queued_and_listening N 1
subscribe 'redisson_lock__channel:{N}:ghost' "$TEST_TMP/ghost"
rcli ZADD "rlock_turns:{N}" 1 ghost >/dev/null
rcli ZADD "rlock_turns:{N}" XX "$(( $(server_ms) + 10000 ))" ghost >/dev/null
check "the ghost gives up first: its turn comes first" test "$(rcli ZRANGE "rlock_turns:{N}" 0 0)" = ghost
t_rel=$(ms)
r release N --owner holder
check "the ghost heard its turn" wait_until 3 got_msg "$TEST_TMP/ghost" 'redisson_lock__channel:{N}:ghost' 0
check "the waiter after it ran" wait_until 10 bg_done "$TEST_TMP/n2"
d=$(( $(bg_t "$TEST_TMP/n2") - t_rel ))
check "told it is next, it tried after 200ms, not at the lease end (${d}ms: 150..200ms + SLACK_MS)" between "$d" 150 $(( 200 + SLACK_MS ))
check "rc 0" test "$(bg_rc "$TEST_TMP/n2")" = 0
kill "$SUBPID" 2>/dev/null

# --- a waiter that gives up (its -w, a signal) leaves the turns at once
r acquire G --ttl 60s --owner holder
r acquire G -w 1s
expect_rc 75 "-w 1s on a held lock runs out"
check "it left the turns (the set is gone)" test "$(rcli EXISTS "rlock_turns:{G}")" = 0
bg "$TEST_TMP/g1" run G -w 30s -- true
check "a waiter is queued for G" wait_until 5 queued_and_listening G 1
kill -TERM "$(cat "$TEST_TMP/g1.pid")"
check "SIGTERM: it ends" wait_until 5 bg_done "$TEST_TMP/g1"
check "and left the turns" test "$(rcli EXISTS "rlock_turns:{G}")" = 0
r release G --owner holder

# --- force-unlock gives the turn as a release does
r acquire F --ttl 60s --owner holder
bg "$TEST_TMP/f1" run F -w 30s -- true
check "a waiter is queued for F" wait_until 5 queued_and_listening F 1
t_rel=$(ms)
r force-unlock F
expect_rc 0 "force-unlock F"
check "the queued waiter ran" wait_until 10 bg_done "$TEST_TMP/f1"
d=$(( $(bg_t "$TEST_TMP/f1") - t_rel ))
check "named by the force-unlock (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))

# --- the other modes keep their own ways of waking (a fair queue's head, the
# read-write and semaphore channels): no turns for them
for mode in fair read write limit; do
  case $mode in fair) flag=(--fair) ;; read) flag=(-s) ;; write) flag=(--write) ;; limit) flag=(--limit 1) ;; esac
  hold=(--write); [ "$mode" = write ] || hold=("${flag[@]}")
  [ "$mode" = read ] && hold=(--write)
  r acquire "M-$mode" --ttl 60s --owner holder "${hold[@]}"
  expect_rc 0 "$mode: the holder takes M-$mode"
  bg "$TEST_TMP/m-$mode" acquire "M-$mode" -w 10s --owner "w-$mode" "${flag[@]}"
  sleep 0.5
  check "$mode: the waiter waits" test ! -e "$TEST_TMP/m-$mode.rc"
  check "$mode: no turns kept" test "$(rcli EXISTS "rlock_turns:{M-$mode}")" = 0
  r release "M-$mode" --owner holder "${hold[@]}"
  expect_rc 0 "$mode: the holder releases"
  check "$mode: the waiter gets it" wait_until 5 bg_done "$TEST_TMP/m-$mode"
  check "$mode: rc 0" test "$(bg_rc "$TEST_TMP/m-$mode")" = 0
done

# --- names: a braced name takes turns as a plain one does; a name shaped like a
# turns' set is another lock's helper key, refused
r acquire "{T}x" --ttl 60s --owner holder
bg "$TEST_TMP/b1" run "{T}x" -w 30s -- true
check "a waiter on {T}x is queued in rlock_turns:{T}x" wait_until 5 eval '[ "$(rcli ZCARD "rlock_turns:{T}x")" = 1 ]'
r release "{T}x" --owner holder
check "it ran" wait_until 10 bg_done "$TEST_TMP/b1"
r acquire "rlock_turns:{x}" --owner x
expect_rc 64 "a lock named like a turns' set is refused (another lock's helper key)"

finish
