#!/usr/bin/env bash
# --fair (Redisson's RFairLock layout): waiters get the lock in arrival order; a
# SIGKILLed waiter at the head stops blocking within 10s whatever its -w; a waiter
# that gives up (-w) or is interrupted (SIGINT) leaves the queue at once; a release
# wakes the head only (its own channel); rlock queues behind a Redisson fair waiter
# (driven with Redisson's own scripts) and survives Redisson's score decrements; a
# plain acquire never jumps the queue; -n --fair never joins it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

queue() { rcli LRANGE "redisson_lock_queue:{$1}" 0 -1 | sed '/^$/d' | tr '\n' ' '; }
queue_len() { rcli LLEN "redisson_lock_queue:{$1}"; }
queue_is() { [ "$(queue "$1")" = "$2" ]; }
queue_len_is() { [ "$(queue_len "$1")" = "$2" ]; }
score() { rcli ZSCORE "redisson_lock_timeout:{$1}" "$2"; }
waiter_rec() { rcli HGET "rlock_waiters:{$1}" "$2"; }
no_waiter_rec() { [ -z "$(waiter_rec "$1" "$2")" ]; }

. "$(dirname "$0")/redisson_fair.sh"
check "Redisson's fair-lock scripts load" test ${#RACQ} = 40 -a ${#RUNLOCK} = 40 -a ${#RFAILED} = 40

# ---- five waiters get the lock in arrival order
r acquire --fair Q --owner holder --ttl 60s
expect_rc 0 "holder takes Q (--fair, free lock)"
check "a fresh fair acquisition writes rlock:meta and a fencing token" \
  bash -c '[ -n "$1" ] && [ -n "$2" ]' _ "$(rcli HGET Q rlock:meta)" "$(rcli GET 'redisson_lock_token:{Q}')"
LOG=$TEST_TMP/order.log
: >"$LOG"
for i in 1 2 3 4 5; do
  bg "$TEST_TMP/q$i" run --fair -w 30s Q -- sh -c 'echo "enter $1" >>"$2"; sleep 0.2; echo "exit $1" >>"$2"' sh "$i" "$LOG"
  check "waiter $i is queued (queue length $i)" wait_until 5 queue_len_is Q "$i"
done
check "every waiter has its rlock_waiters record" test "$(rcli HLEN 'rlock_waiters:{Q}')" = 5
check "rlock_waiters expires by itself (PTTL 1..8000)" between "$(rcli PTTL 'rlock_waiters:{Q}')" 1 8000
rcli HVALS 'rlock_waiters:{Q}' >"$TEST_TMP/records"
check "each record holds host, pid, command, since_ms and its give-up time" python3 -c '
import json,sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
assert len(lines) == 5, lines
for raw in lines:
    d = json.loads(raw)
    assert d["host"] and d["pid"] > 0 and d["command"].startswith("sh ***"), d
    assert isinstance(d["since_ms"], int) and d["until_ms"] > d["since_ms"], d' "$TEST_TMP/records"
check "an own give-up time is at most 8s ahead of the server clock" python3 -c '
import json,sys
now = int(sys.argv[2]) * 1000 + int(sys.argv[3]) // 1000
for raw in [l for l in open(sys.argv[1]).read().split("\n") if l]:
    assert 0 < json.loads(raw)["until_ms"] - now <= 8000' "$TEST_TMP/records" $(rcli TIME)
sleep 1.5 # the waiters refresh their give-up times meanwhile
check "still five queued after 1.5s (nobody dropped)" queue_len_is Q 5
r release Q --owner holder
expect_rc 0 "holder releases Q"
all_done() { local i; for i in 1 2 3 4 5; do bg_done "$TEST_TMP/q$i" || return 1; done; }
check "all five waiters ran" wait_until 20 all_done
for i in 1 2 3 4 5; do
  check "waiter $i exits 0" test "$(bg_rc "$TEST_TMP/q$i")" = 0
done
want=$(printf 'enter %s\nexit %s\n' 1 1 2 2 3 3 4 4 5 5)
check "they held Q one at a time, in arrival order" test "$(cat "$LOG")" = "$want"
echo "  order: $(tr '\n' ' ' <"$LOG")"
check "queue, give-up times and records are gone" \
  test "$(rcli EXISTS Q 'redisson_lock_queue:{Q}' 'redisson_lock_timeout:{Q}' 'rlock_waiters:{Q}')" = 0

# ---- a SIGKILLed head stops blocking within 10s, whatever its -w
r acquire --fair K --owner holder --ttl 60s
bg "$TEST_TMP/k1" acquire --fair K -w 60s --owner victim
K1=$BG_PID
check "the victim is queued" wait_until 5 queue_is K "victim "
bg "$TEST_TMP/k2" acquire --fair K -w 60s --owner next
check "the next waiter is queued behind it" wait_until 5 queue_is K "victim next "
# The worst case: killed right after it refreshed its give-up time (now + 8s).
s0=$(score K victim)
score_moved() { [ "$(score K victim)" != "$s0" ]; }
check "the victim refreshes its give-up time while it waits" wait_until 3 score_moved
kill -9 "$K1"
t_kill=$(ms); t_kill_srv=$(server_ms)
given_up=$(( $(score K victim) - t_kill_srv )) # nobody refreshes it any more
r release K --owner holder
expect_rc 0 "holder releases K (the message goes to the dead head)"
check "the next waiter gets K" wait_until 15 bg_done "$TEST_TMP/k2"
d=$(( $(bg_t "$TEST_TMP/k2") - t_kill )); echo "  a SIGKILLed head (-w 60s), killed right after a refresh, stopped blocking ${d}ms after the kill"
check "exit 0 for the next waiter" test "$(bg_rc "$TEST_TMP/k2")" = 0
check "the next waiter holds K" test "$(rcli HGET K next)" = 1
# The contract's 10s, on the server's clock: the dead head's give-up time (when
# every script treats its entry as gone) is at most 10s after its death. (The
# next waiter's own wake-up after that is a latency: printed above.)
check "the dead head stops blocking within 10s: its give-up time is ${given_up}ms after its death" \
  between "$given_up" 0 10000
check "the dead head's entries are gone" \
  bash -c '[ -z "$1" ] && [ -z "$2" ] && [ -z "$3" ]' _ "$(queue K)" "$(score K victim)" "$(waiter_rec K victim)"
r release K --owner next

# ---- a dead waiter is no waiter (issue 30): once its give-up time has passed it
# is neither counted nor shown (status, --json, check --waiters, the metric), and
# the queue keys expire (Redisson's never do)
r acquire --fair WK --owner holder --ttl 60s
bg "$TEST_TMP/wk" run --fair -w 30s WK -- true
WKP=$BG_PID
check "a run --fair -w 30s waiter queues" wait_until 5 queue_len_is WK 1
check "the queue keys expire while it waits (PTTL > 0)" \
  test "$(rcli PTTL 'redisson_lock_queue:{WK}')" -gt 0 -a "$(rcli PTTL 'redisson_lock_timeout:{WK}')" -gt 0
kill -9 "$WKP"
t_kill=$(ms)
r release WK --owner holder
expect_rc 0 "the holder releases WK (the message goes to the dead waiter)"
no_waiters() { r --json status WK; [ "$(jget "$OUT" locks.0.waiters)" = "[]" ]; }
check "within 10s of its death it is no waiter any more (status --json)" wait_until 12 no_waiters
echo "  the dead waiter stopped counting $(( $(ms) - t_kill ))ms after its death"
r status WK
check "status does not show it" eval '! grep -q "waiting" <<<"$OUT$ERR"'
r check WK --waiters 0,5
expect_rc 0 "check --waiters 0,5: OK (no ghost waiter)"
check "... perfdata waiters=0" grep -qF "'WK waiters'=0;0;5;0;" <<<"$OUT"
r status --format openmetrics WK
check "the metric says 0 waiters" grep -qxF 'rlock_lock_waiters{name="WK"} 0' <<<"$OUT"
keys_gone() { [ "$(rcli EXISTS 'redisson_lock_queue:{WK}' 'redisson_lock_timeout:{WK}' 'rlock_waiters:{WK}')" = 0 ]; }
check "the queue keys have expired (their entries' give-up time and 2s)" wait_until 5 keys_gone

# ---- a waiter that gives up (-w 1s) or gets SIGINT leaves the queue at once
r acquire --fair G --owner holder --ttl 60s
bg "$TEST_TMP/g0" acquire --fair G -w 30s --owner early
check "a first waiter is queued" wait_until 5 queue_is G "early "
bg "$TEST_TMP/g1" acquire --fair G -w 1s --owner quitter
check "the -w 1s waiter is queued behind it" wait_until 5 queue_is G "early quitter "
bg "$TEST_TMP/g2" acquire --fair G -w 30s --owner late
check "a third waiter is queued behind them" wait_until 5 queue_is G "early quitter late "
check "the -w 1s waiter gives up" wait_until 5 bg_done "$TEST_TMP/g1"
q=$(queue G); s=$(score G quitter); rec=$(waiter_rec G quitter)
check "-w 1s: exit 75 (got $(bg_rc "$TEST_TMP/g1"))" test "$(bg_rc "$TEST_TMP/g1")" = 75
check "-w 1s: out of the queue right after it exits (queue: $q)" test "$q" = "early late "
check "-w 1s: no give-up time or record left" bash -c '[ -z "$1" ] && [ -z "$2" ]' _ "$s" "$rec"
T=$TEST_TMP/g3
BG_ENV=(RLOCK_OWNER=interrupted) # run takes its owner token from the environment
bg "$T" run --fair -w 30s G -- touch "$T.ran"
BG_ENV=()
check "SIGINT: the run waiter is queued" wait_until 5 queue_is G "early late interrupted "
check "SIGINT: it listens on its own channel" wait_until 5 has_chan_sub 'redisson_lock__channel:{G}:interrupted'
t0=$(ms)
kill -INT "$BG_PID"
check "SIGINT: the waiter exits" wait_until 3 bg_done "$T"
q=$(queue G); s=$(score G interrupted); rec=$(waiter_rec G interrupted)
d=$(( $(bg_t "$T") - t0 ))
check "SIGINT: exit 130 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 130
check "SIGINT: ended promptly (${d}ms < 500ms)" test "$d" -lt 500
check "SIGINT: out of the queue right after it exits (queue: $q)" test "$q" = "early late "
check "SIGINT: no give-up time or record left" bash -c '[ -z "$1" ] && [ -z "$2" ]' _ "$s" "$rec"
check "SIGINT: the command never ran" test ! -e "$T.ran"

# ---- release wakes the head only, on its own channel
subscribe 'redisson_lock__channel:{G}' "$TEST_TMP/common.sub"
subscribe 'redisson_lock__channel:{G}:early' "$TEST_TMP/head.sub"
subscribe 'redisson_lock__channel:{G}:late' "$TEST_TMP/second.sub"
t0=$(ms)
r release G --owner holder
expect_rc 0 "holder releases G"
check "the head's channel got '0'" wait_until 3 got_msg "$TEST_TMP/head.sub" 'redisson_lock__channel:{G}:early'
check "the head gets G" wait_until 3 bg_done "$TEST_TMP/g0"
d=$(( $(bg_t "$TEST_TMP/g0") - t0 )); echo "  the head had G ${d}ms after the release started"
check "the head exits 0 and holds G" bash -c '[ "$1" = 0 ] && [ "$2" = 1 ]' _ "$(bg_rc "$TEST_TMP/g0")" "$(rcli HGET G early)"
sleep 0.3
check "nothing on the common channel" no_msg "$TEST_TMP/common.sub"
check "nothing on the second waiter's channel" no_msg "$TEST_TMP/second.sub"
check "the second waiter is now the head" queue_is G "late "
r release G --owner early
check "the next release wakes the next head" wait_until 3 got_msg "$TEST_TMP/second.sub" 'redisson_lock__channel:{G}:late'
check "the second waiter gets G" wait_until 3 bg_done "$TEST_TMP/g2"
check "still nothing on the common channel" no_msg "$TEST_TMP/common.sub"
r release G --owner late
check "with nobody queued, the release publishes on the common channel" \
  wait_until 3 got_msg "$TEST_TMP/common.sub" 'redisson_lock__channel:{G}'

# ---- force-unlock wakes the head too (the queue stays)
r acquire --fair FU --owner holder --ttl 60s
bg "$TEST_TMP/fu1" acquire --fair FU -w 30s --owner fu-head
check "a fair waiter queues on FU" wait_until 5 queue_is FU "fu-head "
subscribe 'redisson_lock__channel:{FU}' "$TEST_TMP/fu-common.sub"
subscribe 'redisson_lock__channel:{FU}:fu-head' "$TEST_TMP/fu-head.sub"
r force-unlock FU
expect_rc 0 "force-unlock FU"
check "force-unlock published '0' on the head's channel" \
  wait_until 3 got_msg "$TEST_TMP/fu-head.sub" 'redisson_lock__channel:{FU}:fu-head'
check "the head gets FU" wait_until 3 bg_done "$TEST_TMP/fu1"
check "the head exits 0 and holds FU" bash -c '[ "$1" = 0 ] && [ "$2" = 1 ]' _ "$(bg_rc "$TEST_TMP/fu1")" "$(rcli HGET FU fu-head)"
sleep 0.3
check "force-unlock sent nothing on the common channel" no_msg "$TEST_TMP/fu-common.sub"
r release FU --owner fu-head

# ---- rlock queues behind a Redisson fair waiter, and gets the lock after it
J=8743c9c0-0795-4907-87fd-6c719a6b4586:61
r acquire --fair R --owner holder --ttl 60s
ttl=$(redisson_try R "$J" 5000)
check "a Redisson waiter queues (ttl $ttl)" bash -c '[ "$1" -gt 0 ] && [ "$2" = "$3 " ]' _ "$ttl" "$(queue R)" "$J"
BG_ENV=(RLOCK_OWNER=rl-w) # run takes its owner token from the environment
bg "$TEST_TMP/r1" run --fair -w 30s R -- sh -c 'echo "rlock ran; Redisson lock: $(redis-cli -p $1 EXISTS R)" >"$2"' \
  sh "$REDIS_PORT" "$TEST_TMP/r1.ran"
BG_ENV=()
check "rlock's waiter queues behind it" wait_until 5 queue_is R "$J rl-w "
subscribe "redisson_lock__channel:{R}:$J" "$TEST_TMP/j.sub"
r release R --owner holder
check "the release wakes the Redisson head on its channel" wait_until 3 got_msg "$TEST_TMP/j.sub" "redisson_lock__channel:{R}:$J"
sleep 1.5
check "rlock's waiter waits: it is the Redisson waiter's turn" test ! -e "$TEST_TMP/r1.ran"
check "R is free and both still queued" bash -c '[ "$1" = 0 ] && [ "$2" = "$3 rl-w " ]' _ "$(rcli EXISTS R)" "$(queue R)" "$J"
r acquire R -n --owner plain
expect_rc 75 "a plain acquire -n on the free R with a live queue is busy"
check "busy message names the head" grep -qF "$J" <<<"$ERR"
r acquire --fair R -n --owner single
expect_rc 75 "acquire --fair -n on the free R with a live queue is busy"
check "-n --fair did not join the queue" queue_is R "$J rl-w "
check "-n --fair left no record" no_waiter_rec R single
check "the Redisson waiter takes R (Redisson's script)" test -z "$(redisson_try R "$J" 5000)"
check "R is held by the Redisson thread" test "$(rcli HGET R "$J")" = 1
check "rlock's waiter is the head now" queue_is R "rl-w "
sleep 1.2
check "rlock's waiter still waits while Redisson holds R" test ! -e "$TEST_TMP/r1.ran"
r acquire --fair R -n --owner single
expect_rc 75 "acquire --fair -n on R held by Redisson is busy"
check "-n --fair on a held lock did not join the queue" queue_is R "rl-w "
t0=$(ms)
check "Redisson unlocks (its script: publishes on rlock's head channel)" test "$(redisson_unlock R "$J")" = 1
check "rlock's waiter runs its command" wait_until 5 has_file "$TEST_TMP/r1.ran"
d=$(( $(ms) - t0 )); echo "  rlock's waiter ran ${d}ms after Redisson's unlock"
check "it ran after Redisson's unlock, holding R: $(cat "$TEST_TMP/r1.ran" 2>/dev/null)" \
  grep -q 'Redisson lock: 1' "$TEST_TMP/r1.ran"
check "rlock's run exits 0" wait_until 5 bg_done "$TEST_TMP/r1"
check "exit 0 ($(bg_rc "$TEST_TMP/r1"))" test "$(bg_rc "$TEST_TMP/r1")" = 0
check "R, its queue and records are gone" \
  test "$(rcli EXISTS R 'redisson_lock_queue:{R}' 'redisson_lock_timeout:{R}' 'rlock_waiters:{R}')" = 0

# ---- Redisson's score decrements (issue 30): rlock's waiter's give-up time in the
# queue is the one Redisson gives its place (the one ahead's + 8s), so a Redisson
# acquisition ahead, which takes its wait off every entry, does not make it stale
J2=8743c9c0-0795-4907-87fd-6c719a6b4586:62
K2=8743c9c0-0795-4907-87fd-6c719a6b4586:63
# take_and_unlock NAME THREAD WAIT_MS: the Redisson head takes NAME with a wait of
# WAIT_MS (taken off every score) and unlocks at once, in one transaction
take_and_unlock() {
  printf '%s\n' "MULTI" \
    "EVALSHA $RACQ 3 $1 redisson_lock_queue:{$1} redisson_lock_timeout:{$1} 30000 $2 $3 $(ms)" \
    "EVALSHA $(redisson_unlock_args "$1" "$2")" "EXEC" | rcli >"$TEST_TMP/multi.out"
  check "Redisson's acquire and unlock ran ($(tr '\n' ' ' <"$TEST_TMP/multi.out"))" grep -qx 1 "$TEST_TMP/multi.out"
}
r acquire --fair C --owner holder --ttl 60s
redisson_try C "$J2" 20000 >/dev/null
bg "$TEST_TMP/c1" run --fair -w 30s C -- sh -c 'echo ran >"$1"' sh "$TEST_TMP/c1.ran"
check "rlock's waiter queues behind a Redisson waiter (wait 20s)" wait_until 5 queue_len_is C 2
rl_c=$(queue C | awk '{print $2}')
sj=$(score C "$J2"); sr=$(score C "$rl_c")
check "its give-up time in the queue is the one ahead's + 8s ($sj + 8000 = $sr)" test "$sr" = $(( sj + 8000 ))
redisson_try C "$K2" 60000 >/dev/null
check "a Redisson waiter (wait 60s) queues behind it" queue_is C "$J2 $rl_c $K2 "
check "... its give-up time counted from rlock's, as Redisson counts it" test "$(score C "$K2")" = $(( sr + 60000 ))
subscribe "redisson_lock__channel:{C}:$K2" "$TEST_TMP/kc.sub"
r release C --owner holder
# The Redisson head takes C (its 20s wait off every score) and unlocks at once,
# in one transaction: rlock's waiter is not stale, so it is the one woken.
t0=$(ms)
take_and_unlock C "$J2" 20000
check "rlock's waiter takes C" wait_until 5 has_file "$TEST_TMP/c1.ran"
check "rlock's run exits 0" wait_until 5 bg_done "$TEST_TMP/c1"
check "rlock's release woke the Redisson waiter" wait_until 3 got_msg "$TEST_TMP/kc.sub" "redisson_lock__channel:{C}:$K2"
sleep 0.2
check "... once: Redisson's unlock before it did not (rlock's waiter was not dropped as stale)" \
  test "$(grep -c '^message$' "$TEST_TMP/kc.sub")" = 1
check "... which takes C" test -z "$(redisson_try C "$K2" 60000)"
redisson_unlock C "$K2" >/dev/null

# ---- past what Redisson would give its place (an acquisition ahead lowering every
# score by more than the time ahead of it): an rlock head dropped by Redisson's
# sweep goes back to the head at its next attempt
r acquire --fair D --owner holder --ttl 60s
redisson_try D "$J2" 5000 >/dev/null
BG_ENV=(RLOCK_OWNER=rl-d) # run takes its owner token from the environment
bg "$TEST_TMP/d1" run --fair -w 30s D -- sh -c 'echo ran >"$1"' sh "$TEST_TMP/d1.ran"
BG_ENV=()
check "rlock's waiter queues behind a Redisson waiter" wait_until 5 queue_is D "$J2 rl-d "
redisson_try D "$K2" 60000 >/dev/null
check "a second Redisson waiter (wait 60s) queues behind rlock's" queue_is D "$J2 rl-d $K2 "
subscribe "redisson_lock__channel:{D}:$K2" "$TEST_TMP/k2.sub"
r release D --owner holder
# The Redisson head takes D with a 100s wait (every score lowered by 100s: rlock's
# below now) and unlocks at once, in one transaction: Redisson's unlock drops
# rlock's waiter as a stale head and wakes the Redisson waiter behind it.
t0=$(ms)
take_and_unlock D "$J2" 100000
check "Redisson's sweep dropped rlock's waiter and woke the one behind" \
  wait_until 3 got_msg "$TEST_TMP/k2.sub" "redisson_lock__channel:{D}:$K2"
check "rlock's waiter comes back at the head and takes D" wait_until 5 has_file "$TEST_TMP/d1.ran"
d=$(( $(ms) - t0 )); echo "  rlock's dropped waiter had D ${d}ms after Redisson's unlock"
check "it took D within 2s (${d}ms)" test "$d" -lt 2000
check "the Redisson waiter behind kept its place" wait_until 5 queue_is D "$K2 "
check "rlock's run exits 0" wait_until 5 bg_done "$TEST_TMP/d1"
check "rlock's release woke the Redisson head" wait_until 3 got_msg "$TEST_TMP/k2.sub" "redisson_lock__channel:{D}:$K2" 0 2
check "the Redisson waiter takes D" test -z "$(redisson_try D "$K2" 60000)"
redisson_unlock D "$K2" >/dev/null

# ---- rlock's acquisition takes its window off the Redisson waiters behind it, as
# Redisson's own takes its wait off every waiter (their times counted from its)
r acquire --fair L --owner holder --ttl 60s
bg "$TEST_TMP/l1" acquire --fair L -w 30s --owner rl-a
check "rlock waiter A queues" wait_until 5 queue_is L "rl-a "
redisson_try L "$J" 5000 >/dev/null
bg "$TEST_TMP/l2" acquire --fair L -w 30s --owner rl-b
check "rlock waiter B queues behind Redisson's J" wait_until 5 queue_is L "rl-a $J rl-b "
redisson_try L "$K2" 5000 >/dev/null
check "Redisson's K queues behind B" queue_is L "rl-a $J rl-b $K2 "
sj=$(score L "$J"); sk=$(score L "$K2")
r release L --owner holder
check "A takes L" wait_until 3 bg_done "$TEST_TMP/l1"
check "J (right behind A) lost A's window, 8000ms ($sj -> $(score L "$J"))" test "$(( sj - $(score L "$J") ))" = 8000
check "K (behind rlock waiter B) lost it too ($sk -> $(score L "$K2"))" test "$(( sk - $(score L "$K2") ))" = 8000
check "the queue is J, B, K" queue_is L "$J rl-b $K2 "
redisson_give_up L "$J" 5000
check "J gives up (Redisson's acquireFailed); B is the head" queue_is L "rl-b $K2 "
r release L --owner rl-a
check "B takes L" wait_until 3 bg_done "$TEST_TMP/l2"
check "B exits 0 and holds L" bash -c '[ "$1" = 0 ] && [ "$2" = 1 ]' _ "$(bg_rc "$TEST_TMP/l2")" "$(rcli HGET L rl-b)"
r release L --owner rl-b
check "K takes L after B" test -z "$(redisson_try L "$K2" 5000)"
redisson_unlock L "$K2" >/dev/null

# ---- a stale Redisson head is dropped; a plain acquire then goes through
r acquire --fair S --owner holder --ttl 1s
redisson_try S "$J" 500 >/dev/null
check "a Redisson waiter queues (give-up time: the lease end + 500ms)" queue_is S "$J "
r release S --owner holder
r acquire S -n --owner plain
expect_rc 75 "plain acquire -n while the Redisson head is live"
sleep 1.7
r acquire S -n --owner plain
expect_rc 0 "once its give-up time has passed, a plain acquire drops it and takes S"
check "the stale head is gone" test -z "$(queue S)$(score S "$J")"
r release S --owner plain

# ---- re-entry of a fair hold
r acquire --fair E --owner given --ttl 30s
r acquire --fair E --owner given --ttl 30s
expect_rc 0 "a fair hold is re-entered with its token"
check "count 2" test "$(rcli HGET E given)" = 2
r release E --owner given --all
check "released" key_gone E

# ---- the scripts themselves: a resend answers as the first send; reserved tokens refused
FACQ=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/fair_acquire.lua")
FLEAVE=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/fair_leave.lua")
fair_once() { # NAME OWNER OWN_TOKEN OP JOIN
  rcli EVALSHA "$FACQ" 6 "$1" "redisson_lock_token:{$1}" "rlock_acquire_latch:{$1}:$4" "redisson_lock_queue:{$1}" \
    "redisson_lock_timeout:{$1}" "rlock_waiters:{$1}" "$2" 30000 "$3" 24000 h 1 c v "$5" 8000 | tr '\n' ' '
}
a1=$(fair_once V given 0 op-1 1); a2=$(fair_once V given 0 op-1 1)
check "a fresh fair acquisition sent twice gives the same answer, the resend's saying an earlier send applied it ($a1|$a2)" \
  test "$a2" = "${a1}1 " -a "${a1%% *}" = 1
check "and counts once" test "$(rcli HGET V given)" = 1
a1=$(fair_once V given 0 op-2 1); a2=$(fair_once V given 0 op-2 1)
check "a fair re-entry sent twice gives the same answer and counts once ($a1|$a2)" \
  test "$a2" = "${a1}1 " -a "${a1%% *}" = 2 -a "$(rcli HGET V given)" = 2
a1=$(fair_once V other 0 op-3 1); a2=$(fair_once V other 0 op-3 1)
check "a busy attempt sent twice queues once ($(queue V))" queue_is V "other "
check "a busy answer writes no latch" test -z "$(rcli --scan --pattern 'rlock_acquire_latch:{V}:op-3')"
a1=$(fair_once V own 1 op-4 0)
check "own token, -n: busy and not queued" bash -c '[ "${1%% *}" = 0 ] && [ "$2" = "other " ]' _ "$a1" "$(queue V)"
for tok in rlock:meta mode ''; do
  out=$(fair_once V "$tok" 0 op-5 1 2>&1)
  check "fair_acquire.lua refuses '$tok' ($out)" grep -q reserved <<<"$out"
  out=$(rcli EVALSHA "$FLEAVE" 5 V 'redisson_lock_queue:{V}' 'redisson_lock_timeout:{V}' 'rlock_waiters:{V}' \
    'redisson_lock__channel:{V}' "$tok" 8000 PUBLISH 2>&1)
  check "fair_leave.lua refuses '$tok' ($out)" grep -q reserved <<<"$out"
done
check "fair_leave.lua: a queued waiter leaves ({1})" test "$(rcli EVALSHA "$FLEAVE" 5 V 'redisson_lock_queue:{V}' \
  'redisson_lock_timeout:{V}' 'rlock_waiters:{V}' 'redisson_lock__channel:{V}' other 8000 PUBLISH)" = 1
check "fair_leave.lua: sent again, nothing to do ({0})" test "$(rcli EVALSHA "$FLEAVE" 5 V 'redisson_lock_queue:{V}' \
  'redisson_lock_timeout:{V}' 'rlock_waiters:{V}' 'redisson_lock__channel:{V}' other 8000 PUBLISH)" = 0
check "the queue keys are gone" test "$(rcli EXISTS 'redisson_lock_queue:{V}' 'redisson_lock_timeout:{V}' 'rlock_waiters:{V}')" = 0
rcli DEL V >/dev/null

# ---- -n --fair on a free lock takes it; with --sync-replicas 1 and no replica, undone
r acquire --fair N -n --owner solo
expect_rc 0 "-n --fair on a free lock takes it"
r release N --owner solo
r --sync-replicas 1/100ms acquire --fair N -n --owner solo
check "--sync-replicas without replicas fails (rc $RC)" test "$RC" != 0
check "and undoes the fair acquisition" key_gone N

finish
