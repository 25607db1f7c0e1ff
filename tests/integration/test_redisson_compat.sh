#!/usr/bin/env bash
# Redisson compatibility: a lock written the way Redisson's RLock writes it excludes rlock,
# rlock's release publishes "0" on redisson_lock__channel:{NAME}, rlock can release
# Redisson's lock with its owner token, and a Redisson-style unlock wakes an rlock waiter.
. "$(dirname "$0")/lib.sh"
start_redis

ROWNER=8743c9c0-0795-4907-87fd-6c719a6b4586:1

# --- a Redisson-made lock excludes rlock
rcli HINCRBY RL "$ROWNER" 1 >/dev/null
rcli PEXPIRE RL 30000 >/dev/null
r acquire RL
expect_rc 75 "rlock acquire of a Redisson-held lock is busy"
check "busy message names Redisson's owner" grep -qF "$ROWNER" <<<"$ERR"
r acquire RL -w 500ms
expect_rc 75 "rlock acquire -w 500ms of a Redisson-held lock runs out"
check "Redisson's hash untouched (only its owner field, count 1)" test "$(rcli HGETALL RL | tr '\n' ' ')" = "$ROWNER 1 "
r status RL --json
expect_rc 0 "status of the Redisson lock: held"
check "status --json parses" is_json "$OUT"
check "status: owner $ROWNER, count 1, hash, not foreign, holder null" python3 -c '
import json,sys; l=json.loads(sys.argv[1])["locks"][0]
assert l["owner"]==sys.argv[2] and l["count"]==1 and l["type"]=="hash" and l["foreign"] is False and l["holder"] is None, l
assert l["owners"]==[{"owner":sys.argv[2],"count":1}], l
assert 25000 < l["ttl_ms"] <= 30000, l' "$OUT" "$ROWNER"
r status RL
check "status text shows owner and count 1" bash -c 'grep -qF "$2" <<<"$1" && grep -q "count 1" <<<"$1"' _ "$OUT" "$ROWNER"
r renew RL --owner wrong
expect_rc 1 "renew of Redisson's lock with a wrong owner"

# --- rlock re-enters Redisson's lock with its token (same thread = same token)
r acquire RL --owner "$ROWNER" --ttl 30s
expect_rc 0 "re-enter the Redisson lock with its owner token"
check "count 2 in Redisson's field" test "$(rcli HGET RL "$ROWNER")" = 2
r release RL --owner "$ROWNER"
check "back to count 1" test "$(rcli HGET RL "$ROWNER")" = 1

# --- release of Redisson's lock via rlock release --owner: deleted + message published
subscribe 'redisson_lock__channel:{RL}' "$TEST_TMP/sub1"
r release RL --owner "$ROWNER"
expect_rc 0 "rlock release --owner <Redisson token>"
check "Redisson's hash deleted" test "$(rcli EXISTS RL)" = 0
check "message 0 published on redisson_lock__channel:{RL}" wait_until 3 got_msg "$TEST_TMP/sub1" 'redisson_lock__channel:{RL}'
kill "$SUBPID" 2>/dev/null

# --- rlock's own acquire + release publishes 0 (Redisson waiters wake)
subscribe 'redisson_lock__channel:{FR}' "$TEST_TMP/sub2"
r acquire FR --owner me
expect_rc 0 "rlock acquire of a free lock"
check "the rlock lock is a Redisson-shaped hash: owner field = count" test "$(rcli HGET FR me)" = 1
check "lease is a PEXPIRE" test "$(rcli PTTL FR)" -gt 0
check "no message yet (acquire publishes nothing)" bash -c '! grep -q "^message$" "$1"' _ "$TEST_TMP/sub2"
r release FR --owner me
expect_rc 0 "rlock release"
check "release published 0 on redisson_lock__channel:{FR}" wait_until 3 got_msg "$TEST_TMP/sub2" 'redisson_lock__channel:{FR}'
echo "  subscriber saw: $(tr '\n' ' ' <"$TEST_TMP/sub2")"
kill "$SUBPID" 2>/dev/null

# re-entered: only the last level's release publishes
subscribe 'redisson_lock__channel:{FR2}' "$TEST_TMP/sub3"
r acquire FR2 --owner me; r acquire FR2 --owner me
r release FR2 --owner me
sleep 0.2
check "releasing one of two levels publishes nothing" bash -c '! grep -q "^message$" "$1"' _ "$TEST_TMP/sub3"
r release FR2 --owner me
check "the last level's release publishes 0" wait_until 3 got_msg "$TEST_TMP/sub3" 'redisson_lock__channel:{FR2}'
kill "$SUBPID" 2>/dev/null

# force-unlock also publishes (wakes Redisson waiters)
subscribe 'redisson_lock__channel:{FU}' "$TEST_TMP/sub4"
rcli HINCRBY FU "$ROWNER" 1 >/dev/null; rcli PEXPIRE FU 30000 >/dev/null
r force-unlock FU
expect_rc 0 "force-unlock of a Redisson lock"
check "force-unlock published 0" wait_until 3 got_msg "$TEST_TMP/sub4" 'redisson_lock__channel:{FU}'
kill "$SUBPID" 2>/dev/null

# channel naming for a name holding '{': redisson_lock__channel:NAME
subscribe 'redisson_lock__channel:a{t}b' "$TEST_TMP/sub5"
r acquire 'a{t}b' --owner me
r release 'a{t}b' --owner me
expect_rc 0 "release a{t}b"
check "a{t}b: published on redisson_lock__channel:a{t}b" wait_until 3 got_msg "$TEST_TMP/sub5" 'redisson_lock__channel:a{t}b'
kill "$SUBPID" 2>/dev/null

# --- a Redisson-style unlock (DEL + PUBLISH) wakes an rlock waiter promptly
rcli HINCRBY WK "$ROWNER" 1 >/dev/null
rcli PEXPIRE WK 30000 >/dev/null
( "$RLOCK" acquire WK -w 5s --owner waiter >"$TEST_TMP/wk.out" 2>"$TEST_TMP/wk.err"; echo $? >"$TEST_TMP/wk.rc"; ms >"$TEST_TMP/wk.t" ) &
_pids+=($!)
waiting() { has_chan_sub 'redisson_lock__channel:{WK}'; }
check "the rlock waiter subscribed to redisson_lock__channel:{WK}" wait_until 3 waiting
sleep 0.5
t_unlock=$(ms)
rcli DEL WK >/dev/null
rcli PUBLISH 'redisson_lock__channel:{WK}' 0 >/dev/null
finished() { [ -s "$TEST_TMP/wk.t" ]; }
check "the waiter finished" wait_until 6 finished
d=$(( $(cat "$TEST_TMP/wk.t" 2>/dev/null || echo 99999999999999) - t_unlock ))
echo "  waiter took WK ${d}ms after the Redisson-style unlock"
check "the waiter exited 0" test "$(cat "$TEST_TMP/wk.rc" 2>/dev/null)" = 0
check "the waiter woke promptly (${d}ms < 500ms)" test "$d" -lt 500
check "the waiter holds WK" test "$(rcli HGET WK waiter)" = 1

# Redisson's unlock with unlockMessage "0" on a hash that rlock wrote is understood by rlock:
# Redisson's unlock script: HINCRBY -1; if 0 -> DEL + PUBLISH. Emulate it on rlock's lock.
r acquire RJ --owner "$ROWNER"
c=$(rcli HINCRBY RJ "$ROWNER" -1)
[ "$c" = 0 ] && { rcli DEL RJ >/dev/null; rcli PUBLISH 'redisson_lock__channel:{RJ}' 0 >/dev/null; }
r acquire RJ -n
expect_rc 0 "after Redisson's unlock of an rlock-made lock, rlock can take it"

finish
