#!/usr/bin/env bash
# Owner tokens that could name a field of the lock's own record ('rlock:meta',
# 'rlock:...', Redisson's 'mode') are usage errors (64), as are empty, over-long and
# unprintable tokens; the scripts refuse them too (an error reply, nothing
# changed), and a holder is never reported as one of those fields.
. "$(dirname "$0")/lib.sh"
start_redis

r acquire L --owner holder --ttl 60s
expect_rc 0 "holder takes L"
snapshot() { rcli HGETALL L | tr '\n' ' '; }
before=$(snapshot)

# --- the command line refuses them (64), naming where the token came from
for tok in rlock:meta rlock:x rlock: mode; do
  r release L --owner "$tok" --all
  expect_rc 64 "release L --owner $tok --all"
  check "release --owner $tok: one error line naming --owner and 'reserved'" \
    bash -c '[[ $1 == "rlock: --owner: "*reserved* ]] && [ "$(wc -l <<<"$1")" = 1 ]' _ "$ERR"
  r acquire "N-$tok" --owner "$tok"
  expect_rc 64 "acquire --owner $tok"
  check "acquire --owner $tok made no lock" key_gone "N-$tok"
  r renew L --owner "$tok"
  expect_rc 64 "renew --owner $tok"
done
RLOCK_OWNER=rlock:meta r release L --all
expect_rc 64 "RLOCK_OWNER=rlock:meta release --all"
check "RLOCK_OWNER: the error names RLOCK_OWNER" grep -q '^rlock: RLOCK_OWNER: ' <<<"$ERR"
RLOCK_OWNER=mode r acquire N2
expect_rc 64 "RLOCK_OWNER=mode acquire"
RLOCK_OWNER=rlock:meta r run N3 -- touch "$TEST_TMP/ran"
expect_rc 64 "RLOCK_OWNER=rlock:meta run"
check "run with a reserved RLOCK_OWNER did not run the command" test ! -e "$TEST_TMP/ran"
r acquire N4 --owner "$(printf 't%.0s' $(seq 1 257))"
expect_rc 64 "a 257-byte token"
r acquire N4 --owner "$(printf 't%.0s' $(seq 1 256))"
expect_rc 0 "a 256-byte token is fine"
r acquire N5 --owner $'tab\there'
expect_rc 64 "a token with a tab"
r acquire N5 --owner $'caf\xc3\xa9'
expect_rc 64 "a token with non-ASCII bytes"
r acquire N5 --owner 'meta'
expect_rc 0 "'meta' is an ordinary token"
check "L is unchanged after every refused request" test "$(snapshot)" = "$before"

# --- a running `rlock run` is not disturbed by a release with a reserved token
bg "$TEST_TMP/run" run RUN --ttl 1.5s -- sleep 2
check "run holds RUN" wait_until 5 key_there RUN
r release RUN --owner rlock:meta --all
expect_rc 64 "release RUN --owner rlock:meta --all while run holds it"
check "RUN is still held" key_there RUN
check "the run ends" wait_until 10 bg_done "$TEST_TMP/run"
check "the run exits 0 (its lock was never lost; got $(bg_rc "$TEST_TMP/run"))" test "$(bg_rc "$TEST_TMP/run")" = 0

# --- the scripts refuse them too: an error reply, nothing changed
REL=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/release.lua")
ACQ=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/acquire.lua")
REN=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/renew.lua")
pttl_before=$(rcli PTTL L)
for tok in rlock:meta rlock:x mode ''; do
  out=$(rcli EVALSHA "$REL" 3 L 'redisson_lock__channel:{L}' "redisson_unlock_latch:{L}:op1" "$tok" 1 PUBLISH 10000 2>&1)
  check "release.lua refuses '$tok' ($out)" grep -q 'reserved' <<<"$out"
  out=$(rcli EVALSHA "$ACQ" 3 L 'redisson_lock_token:{L}' "rlock_acquire_latch:{L}:op1" "$tok" 30000 0 10000 h 1 c v 2>&1)
  check "acquire.lua refuses '$tok' on a held lock ($out)" grep -q 'reserved' <<<"$out"
  out=$(rcli EVALSHA "$ACQ" 3 FREE 'redisson_lock_token:{FREE}' "rlock_acquire_latch:{FREE}:op1" "$tok" 30000 0 10000 h 1 c v 2>&1)
  check "acquire.lua refuses '$tok' on a free lock ($out)" grep -q 'reserved' <<<"$out"
  out=$(rcli EVALSHA "$REN" 1 L "$tok" 0 2>&1)
  check "renew.lua refuses '$tok' ($out)" grep -q 'reserved' <<<"$out"
done
check "after the refused scripts L is unchanged" test "$(snapshot)" = "$before"
check "after the refused scripts L's lease was not raised" test "$(rcli PTTL L)" -le "$pttl_before"
check "no lock, counter or latch was created for FREE" test -z "$(rcli --scan --pattern '*FREE*')"
check "no latch was left by a refused request" test -z "$(rcli --scan --pattern '*latch:{L}:op1')"

# --- a holder is never a reserved field (rlock:..., mode), whatever the field order
rcli HSET RW mode write 'rlock:x' 5 'uuid-1:7' 1 >/dev/null
rcli PEXPIRE RW 60000 >/dev/null
r acquire RW
expect_rc 75 "acquire of a hash with mode/rlock:x fields is busy"
check "busy names the owner field, not mode or rlock:x" grep -q 'held for writing.* by uuid-1:7' <<<"$ERR"
r acquire RW --json
check "busy --json holder is the owner field" test "$(jget "$OUT" holder)" = 'uuid-1:7'
r release RW --owner other
expect_rc 1 "plain release of a read-write lock"
check "plain release says it is a read-write lock held for writing" grep -q 'read-write lock held for writing' <<<"$ERR"
r renew RW --owner other
expect_rc 1 "plain renew of a read-write lock"
check "plain renew says it is a read-write lock held for writing" grep -q 'read-write lock held for writing' <<<"$ERR"
r status RW --json
check "status lists only the owner field as an owner" python3 -c '
import json,sys; l=json.loads(sys.argv[1])["locks"][0]
assert l["owners"]==[{"owner":"uuid-1:7","count":1}], l["owners"]' "$OUT"

finish
