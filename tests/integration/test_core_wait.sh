#!/usr/bin/env bash
# Waiting: -w wakes on the release message or when the lease runs out, the deadline,
# -n, and SIGTERM/SIGINT ending a waiter at once without leaving anything in Redis.
. "$(dirname "$0")/lib.sh"
start_redis

# bg_waiter FILEPREFIX ARGS...: runs rlock in the background; writes .rc and .t (ms at exit)
bg_waiter() {
  local f=$1; shift
  ( "$RLOCK" "$@" >"$f.out" 2>"$f.err"; echo $? >"$f.rc"; ms >"$f.t" ) &
  _pids+=($!)
}
done_file() { [ -s "$1" ]; }

# --- a waiter wakes at the release (its message), not at the 20s lease end
r acquire A --ttl 20s --owner holder
expect_rc 0 "holder takes A (ttl 20s)"
W=$TEST_TMP/w1
bg_waiter "$W" acquire A -w 10s --owner waiter
check "the waiter subscribes to redisson_lock__channel:{A}" wait_until 5 has_sub A
check "the waiter is still waiting" test ! -e "$W.rc"
sleep 1
t_rel=$(ms)
r release A --owner holder
expect_rc 0 "holder releases A"
check "the waiter finishes" wait_until 5 done_file "$W.t"
d=$(( $(cat "$W.t") - t_rel )); echo "  waiter got A ${d}ms after the release started"
check "the waiter exits 0" test "$(cat "$W.rc")" = 0
check "the waiter woke at the release, not the lease end or -w (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
check "the waiter now holds A" test "$(rcli HGET A waiter)" = 1
check "the waiter left no subscription" wait_until 2 no_sub A
r release A --owner waiter

# --- the wait deadline on a lock held with a long TTL
r acquire B --ttl 60s --owner holder
t0=$(ms)
r acquire B -w 1s
d=$(( $(ms) - t0 )); echo "  -w 1s on a held lock ended after ${d}ms"
expect_rc 75 "-w 1s on a held lock runs out"
check "-w 1s ended after 0.9s, not much later (${d}ms: 900..1000 + SLACK_MS)" between "$d" 900 $(( 1000 + SLACK_MS ))
# off a terminal: the waiting line (issue 43, test_run_wait_lines), then the error on one line
check "wait ran out: the waiting line, then the error on one line" \
  eval '[ "$(grep -c . <<<"$ERR")" -eq 2 ] && head -n 1 <<<"$ERR" | grep -q "^rlock: waiting up to 1s for " &&
        tail -n 1 <<<"$ERR" | grep -q "still busy after waiting 1s"'
t0=$(ms)
r -E 7 acquire B -w 500ms
d=$(( $(ms) - t0 ))
expect_rc 7 "-E 7 when the wait runs out"
check "-w 500ms ended after 0.4s, not much later (${d}ms: 400..500 + SLACK_MS)" between "$d" 400 $(( 500 + SLACK_MS ))
t0=$(ms)
r acquire B -w 1.5
d=$(( $(ms) - t0 ))
expect_rc 75 "-w 1.5 (bare seconds with a fraction)"
check "-w 1.5 ended after 1.4s, not much later (${d}ms: 1400..1500 + SLACK_MS)" between "$d" 1400 $(( 1500 + SLACK_MS ))
check "the holder still holds B" test "$(rcli HGET B holder)" = 1
check "no waiter left subscribed on B" wait_until 2 no_sub B

# --- -n fails at once
t0=$(ms)
r acquire B -n
d=$(( $(ms) - t0 ))
expect_rc 75 "-n on a held lock"
check "-n fails at once: no wait for the 60s lease (${d}ms < SLACK_MS)" test "$d" -lt "$SLACK_MS"
t0=$(ms)
r acquire B
d=$(( $(ms) - t0 ))
expect_rc 75 "no -w: does not wait"
check "acquire without -w fails at once (${d}ms < SLACK_MS)" test "$d" -lt "$SLACK_MS"

# --- a waiter gets the lock when the holder's lease runs out (no release message)
r acquire C --ttl 1s --owner holder
h_end=$(lease_end_ms C)
t0=$(ms)
r acquire C -w 10s --owner w2
d=$(( $(ms) - t0 )); echo "  waiter on a 1s lease got it after ${d}ms"
expect_rc 0 "the waiter gets C when the lease runs out"
w_at=$(acquired_at_ms C)
check "got it at the lease end, not before ($(( w_at - h_end ))ms after it, server time)" test "$w_at" -ge "$h_end"
check "... and then, not at its -w 10s (${d}ms < 1000ms + SLACK_MS)" test "$d" -lt $(( 1000 + SLACK_MS ))
check "the waiter holds C" test "$(rcli HGET C w2)" = 1

# --- SIGTERM / SIGINT end a waiter at once, nothing left behind
# launched through python so that SIGINT is not ignored (bash ignores it in background jobs)
start_waiter() {
  python3 -c 'import os,signal,sys
signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGTERM, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$RLOCK" "$@" >"$TEST_TMP/sig.out" 2>"$TEST_TMP/sig.err" &
  WPID=$!
  _pids+=("$WPID")
}
gone_pid() { ! kill -0 "$1" 2>/dev/null; }
r acquire D --ttl 60s --owner holder
for sig in TERM:143 INT:130; do
  name=${sig%%:*}; code=${sig##*:}
  keys_before=$(rcli DBSIZE); hash_before=$(rcli HGETALL D); fence_before=$(rcli GET 'redisson_lock_token:{D}')
  start_waiter acquire D -w 30s --owner "sig$name"
  check "SIG$name waiter subscribed" wait_until 5 has_sub D
  sleep 0.2
  t0=$(ms)
  kill -"$name" "$WPID"
  wait_until 3 gone_pid "$WPID"
  d=$(( $(ms) - t0 ))
  wait "$WPID"; rc=$?
  echo "  SIG$name: exit $rc after ${d}ms; stderr: $(cat "$TEST_TMP/sig.err")"
  RC=$rc; expect_rc "$code" "SIG$name ends a waiting acquire"
  check "SIG$name ends it at once, not at -w 30s (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
  check "after SIG$name: no subscriber left (PUBSUB NUMSUB 0)" wait_until 1 no_sub D
  check "after SIG$name: the lock is unchanged" test "$(rcli HGETALL D)" = "$hash_before"
  check "after SIG$name: no owner field of the waiter" test -z "$(rcli HGET D "sig$name")"
  check "after SIG$name: no new keys" test "$(rcli DBSIZE)" = "$keys_before"
  check "after SIG$name: fence counter untouched" test "$(rcli GET 'redisson_lock_token:{D}')" = "$fence_before"
  check "after SIG$name: no client of the waiter left connected" test "$(rcli CLIENT LIST | grep -c 'cmd=subscribe\|cmd=ssubscribe')" = 0
done

finish
