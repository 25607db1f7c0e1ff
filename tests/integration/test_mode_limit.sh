#!/usr/bin/env bash
# --limit N: Redisson's RPermitExpirableSemaphore layout (NAME = free permits,
# {NAME}:timeout = permit -> lease end, redisson_sc:{NAME} = channel), plus
# rlock's holder records in rlock_permits:{NAME}. At most N holders at once
# (6 workers, --limit 3), a SIGKILLed holder's permit returns when its lease
# ends, acquire/busy/release/renew, re-entry, sizing, layouts refusing each
# other, Redisson's own scripts counting against rlock (and waking it), and a
# run whose permit is removed being stopped (76).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

zset() { printf '{%s}:timeout' "$1"; }
recs() { printf 'rlock_permits:{%s}' "$1"; }
held() { rcli ZCARD "$(zset "$1")"; }
free_of() { rcli GET "$1"; }
score() { rcli ZSCORE "$(zset "$1")" "$2"; }

# --- acquire twice, the third is busy; release one, the third gets in
r acquire P --limit 2 --owner t1 --ttl 30s
expect_rc 0 "acquire --limit 2 (first holder)"
check "it prints its owner token" test "$OUT" = t1
check "P was created with 2 permits, 1 left" test "$(free_of P)" = 1
check "the permit is t1 in {P}:timeout" test "$(rcli ZRANGE "$(zset P)" 0 -1)" = t1
end=$(score P t1); now=$(server_ms)
check "t1's lease ends ~30s from now in server time ($(( end - now ))ms)" between $(( end - now )) 29000 30000
r acquire P --limit 2 --owner t2 --json
expect_rc 0 "acquire --limit 2 (second holder)"
check "--json: acquired, mode limit, limit 2, count 1" python3 -c '
import json,sys; d=json.loads(sys.argv[1])
assert d["acquired"] and d["mode"]=="limit" and d["limit"]==2 and d["count"]==1 and not d["reentered"], d' "$OUT"
fence2=$(jget "$OUT" fence)
check "P: 0 free, 2 held" test "$(free_of P) $(held P)" = "0 2"
r acquire P --limit 2 -n --owner t3
expect_rc 75 "a third acquire -n is busy"
check "the busy error is one 'rlock: ' line" one_err_line
r acquire P --limit 2 -n --owner t3 --json
check "busy --json: type semaphore, holder t1 (whose lease ends first), ttl ~30s, its record" python3 -c '
import json,sys; d=json.loads(sys.argv[1])
assert not d["acquired"] and d["type"]=="semaphore" and d["holder"]=="t1", d
assert 0 < d["ttl_ms"] <= 30000 and d["holder_info"]["pid"] > 0, d' "$OUT"
check "the busy attempt changed nothing (0 free, 2 held, no t3)" \
  test "$(free_of P) $(held P) $(score P t3)" = "0 2 "
check "a holder record per permit in rlock_permits:{P}" test "$(rcli HLEN "$(recs P)")" = 2
check "the records hash has a lease (PEXPIRE, at most the 30s TTL: $(rcli PTTL "$(recs P)"))" between "$(rcli PTTL "$(recs P)")" 1 30000
check "t2's record: host, pid, command, fence $fence2, ttl 30000" python3 -c '
import json,sys; d=json.loads(sys.argv[1])
assert d["host"] and d["pid"] > 0 and "command" in d and d["fence"]==int(sys.argv[2]) and d["ttl_ms"]==30000, d' \
  "$(rcli HGET "$(recs P)" t2)" "$fence2"
r release P --limit 2 --owner t1
expect_rc 0 "release --limit 2 --owner t1"
check "t1's permit and record are gone, 1 free" \
  test "$(score P t1)|$(rcli HEXISTS "$(recs P)" t1)|$(free_of P)" = "|0|1"
r acquire P --limit 2 -n --owner t3 --json
expect_rc 0 "the third acquire now succeeds"
fence3=$(jget "$OUT" fence)
check "each fresh acquisition has a larger fence ($fence2 < $fence3)" test "$fence3" -gt "$fence2"
r release P --limit 2 --owner t1
expect_rc 1 "releasing t1 again: not held"
check "... says who holds a permit" grep -q 'held by t[23]' <<<"$ERR"

# --- renew moves the lease end in the zset
before=$(score P t2)
r renew P --limit 2 --owner t2 --ttl 90s
expect_rc 0 "renew --limit 2 --owner t2 --ttl 90s"
after=$(score P t2); now=$(server_ms)
check "renew moved t2's lease end ($before -> $after, $(( after - now ))ms left)" \
  eval '[ "$after" -gt "$before" ] && between $(( after - now )) 85000 90000'
check "the records hash lives at least as long (PTTL $(rcli PTTL "$(recs P)"))" test "$(rcli PTTL "$(recs P)")" -gt 85000
r renew P --limit 2 --owner t2 --ttl 5s
check "with one level, renew sets the lease exactly (may shorten: --hold-min)" \
  between $(( $(score P t2) - $(server_ms) )) 1 5000
r renew P --limit 2 --owner nobody
expect_rc 1 "renew of a token without a permit: not held"
r release P --limit 2 --owner t2
r release P --limit 2 --owner t3
check "all released: 2 free, none held, no records left" \
  test "$(free_of P) $(held P) $(rcli EXISTS "$(recs P)")" = "2 0 0"

# --- re-entry: one permit, levels counted; the permit returns at level 0
r acquire RE --limit 2 --owner me --ttl 20s
r acquire RE --limit 2 --owner me --ttl 5s --json
expect_rc 0 "the same token again: re-entered"
check "--json: reentered, count 2, the same single permit" python3 -c '
import json,sys; d=json.loads(sys.argv[1]); assert d["reentered"] and d["count"]==2, d' "$OUT"
check "one permit held, one free" test "$(held RE) $(free_of RE)" = "1 1"
check "re-entry with a shorter --ttl did not shorten the lease" between $(( $(score RE me) - $(server_ms) )) 15000 20000
r release RE --limit 2 --owner me --json
check "one level released, 1 remaining, permit still held" \
  test "$(jget "$OUT" remaining) $(held RE)" = "1 1"
r acquire RE --limit 2 --owner me
r acquire RE --limit 2 --owner me
r release RE --limit 2 --owner me --all --json
expect_rc 0 "release --all"
check "--all gave the permit back (remaining 0, 2 free)" test "$(jget "$OUT" remaining) $(free_of RE)" = "0 2"

# --- a nested run (RLOCK_OWNER inherited) re-enters: its release leaves the
# outer run's permit in place, so the outer run is not lost
T=$TEST_TMP/nest
bg "$T" run NE --limit 1 --ttl 1.5s -- sh -c '
  "$1" run NE --limit 1 -- sh -c "redis-cli -p $2 ZCARD \"{NE}:timeout\" >$3.inner"
  sleep 1.2
  redis-cli -p $2 ZCARD "{NE}:timeout" >$3.after' sh "$RLOCK" "$REDIS_PORT" "$T"
check "the outer run ends" wait_until 10 bg_done "$T"
check "it exits 0, not lost (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "inside the inner run: still one permit ($(cat "$T.inner" 2>/dev/null))" test "$(cat "$T.inner" 2>/dev/null)" = 1
check "after the inner run: the outer's permit is still held ($(cat "$T.after" 2>/dev/null))" \
  test "$(cat "$T.after" 2>/dev/null)" = 1
check "at the end: NE's permit is back (1 free, none held)" test "$(free_of NE) $(held NE)" = "1 0"

# --- sizing: created with N; resized only while no permit is held
r acquire SZ --limit 2 --owner a
r acquire SZ --limit 3 -n --owner b
expect_rc 64 "a different --limit while a permit is held"
echo "  $ERR"
check "the error names the size, the held count and the rule" \
  eval 'one_err_line && grep -q "semaphore of 2 permits, 1 of them held" <<<"$ERR" && grep -q "same --limit" <<<"$ERR"'
check "nothing changed (1 free, 1 held)" test "$(free_of SZ) $(held SZ)" = "1 1"
r acquire SZ --limit 3 -w 2s --owner b
expect_rc 64 "the mismatch is refused at once with -w too"
r run SZ --limit 5 -- true
expect_rc 64 "run with a different --limit while held: 64"
r release SZ --limit 2 --owner a
r acquire SZ --limit 3 --owner b
expect_rc 0 "with no permit held, --limit 3 resizes SZ"
check "SZ: 3 in all (2 free, 1 held)" test "$(free_of SZ) $(held SZ)" = "2 1"
r release SZ --limit 3 --owner b

# --- layouts refuse each other
r acquire PL --owner x
r acquire PL --limit 2 -n
expect_rc 75 "--limit on a plain lock is busy"
check "... held as a plain lock, by x" grep -q 'plain lock.*by x' <<<"$ERR"
check "the plain lock is untouched" test "$(rcli HGET PL x)" = 1
r release PL --limit 2 --owner x
expect_rc 1 "release --limit of a plain lock: not held in this mode"
r renew PL --limit 2 --owner x
expect_rc 1 "renew --limit of a plain lock: not held in this mode"
r acquire P -n
expect_rc 75 "a plain acquire on a semaphore name is busy"
check "... and says it is a semaphore held with --limit, not a foreign key (issue 19)" \
  eval '[[ $ERR == *"it is a semaphore held with --limit"* && $ERR != *foreign* ]]'
check "the semaphore is untouched (2 free)" test "$(free_of P) $(rcli TYPE P)" = "2 string"
rcli HSET RW mode read 'r1' 1 >/dev/null
r acquire RW --limit 2 -n --json
expect_rc 75 "--limit on a read-write lock is busy"
check "--json: held_as read" test "$(jget "$OUT" held_as)" = read
rcli SET FS some-token >/dev/null
r acquire FS --limit 2 -n
expect_rc 75 "--limit on a foreign string key is busy"
check "the foreign key is untouched" test "$(rcli GET FS)" = some-token

# --- the scripts themselves: reserved tokens, resends answered as the first send
eval_acquire() { # NAME OWNER OWN_TOKEN OP
  rcli EVAL "$(cat "$RLOCK_LUA/permit_acquire.lua")" 6 "$1" "$(zset "$1")" "redisson_sc:{$1}" \
    "redisson_lock_token:{$1}" "$(recs "$1")" "rlock_acquire_latch:{$1}:$4" "$2" 30000 "$3" 60000 2 PUBLISH h 1 c v
}
out=$(eval_acquire SC 'rlock:x' 0 op1 2>&1)
check "permit_acquire.lua refuses a reserved token ($out)" grep -q 'owner token is empty or reserved' <<<"$out"
out=$(eval_acquire SC 'mode' 0 op1 2>&1)
check "... and 'mode'" grep -q 'reserved' <<<"$out"
check "... changing nothing" test "$(rcli EXISTS SC)" = 0
a1=$(eval_acquire SC given 0 op2 | tr '\n' ' ')
a2=$(eval_acquire SC given 0 op2 | tr '\n' ' ')
check "a resend of a given token's acquisition answers as the first, adding that an earlier send applied it ($a1|$a2)" \
  test "$a2" = "${a1}1 "
check "... and counted once (level 1)" python3 -c '
import json,sys; assert json.loads(sys.argv[1])["count"]==1' "$(rcli HGET "$(recs SC)" given)"
a3=$(eval_acquire SC given 0 op3 | head -1)
check "a new request of the same token re-enters (code 2)" test "$a3" = 2
b1=$(eval_acquire SC own 1 op4 | tr '\n' ' ')
b2=$(eval_acquire SC own 1 op5 | tr '\n' ' ')
check "own token found again = acquired (code 1), no second permit ($b1 / $b2)" \
  eval '[ "${b2%% *}" = 1 ] && [ "$(held SC)" = 2 ] && [ "$(free_of SC)" = 0 ]'
for script in permit_release permit_renew; do
  if [ $script = permit_release ]; then
    out=$(rcli EVAL "$(cat "$RLOCK_LUA/$script.lua")" 5 SC "$(zset SC)" 'redisson_sc:{SC}' "$(recs SC)" \
      'redisson_unlock_latch:{SC}:x' 'rlock:meta' 0 PUBLISH 60000 2>&1)
  else
    out=$(rcli EVAL "$(cat "$RLOCK_LUA/$script.lua")" 4 SC "$(zset SC)" 'redisson_sc:{SC}' "$(recs SC)" \
      'rlock:meta' 0 PUBLISH 2>&1)
  fi
  check "$script.lua refuses a reserved token" grep -q 'owner token is empty or reserved' <<<"$out"
done
rel() { rcli EVAL "$(cat "$RLOCK_LUA/permit_release.lua")" 5 SC "$(zset SC)" 'redisson_sc:{SC}' "$(recs SC)" \
  "redisson_unlock_latch:{SC}:$1" own 0 PUBLISH 60000 | tr '\n' ' '; }
c1=$(rel op6); c2=$(rel op6)
check "a resent release answers as the first ($c1 / $c2) and frees one permit" \
  test "$c1|$c2|$(free_of SC)" = "$c1|$c1|1"

# --- expired permits are given back (and their records dropped) by the next script
r acquire EX --limit 1 --ttl 300ms --owner short
sleep 0.5
check "the expired permit is still in the zset until a script looks" test "$(held EX)" = 1
r acquire EX --limit 1 -n --owner next
expect_rc 0 "the next acquire finds it expired and takes the permit"
check "the expired holder's permit and record are gone" \
  test "$(score EX short)|$(rcli HEXISTS "$(recs EX)" short)" = "|0"
r release EX --limit 1 --owner next

# --- a waiter wakes when the nearest lease ends (nobody publishes an expiry)
r acquire WL --limit 1 --ttl 1s --owner h
h_end=$(score WL h)
t0=$(ms)
r acquire WL --limit 1 -w 5s --owner w
d=$(( $(ms) - t0 )); echo "  the waiter got WL ${d}ms after it started (lease 1s)"
expect_rc 0 "a waiter gets the permit when its holder's lease ends"
w_at=$(jget "$(rcli HGET "$(recs WL)" w)" acquired_at_ms)
# Server times: the waiter's acquisition against the holder's lease end.
check "at the lease end, not before (acquired $(( w_at - h_end ))ms after it, server time)" test "$w_at" -ge "$h_end"
check "... and by the lease end, not its -w 5s (${d}ms)" test "$d" -lt 5000
r release WL --limit 1 --owner w

# --- --sync-replicas without replicas: the acquisition is undone
r --sync-replicas 1/200ms acquire SR --limit 2 --owner s
expect_rc 69 "--sync-replicas 1 with no replica fails"
check "... and the permit was given back (2 free, none held)" test "$(free_of SR) $(held SR)" = "2 0"

# --- Redisson: its own scripts (RedissonPermitExpirableSemaphore, Redisson 4.x,
# tryAcquire and tryRelease as sent by the Java client; a fixture playing it)
REDISSON_ACQUIRE="local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); \
if #expiredIds > 0 then redis.call('zrem', KEYS[2], unpack(expiredIds)); \
local value = redis.call('incrby', KEYS[1], #expiredIds); \
if tonumber(value) > 0 then redis.call(ARGV[5], KEYS[3], value); end;end; \
local value = redis.call('get', KEYS[1]); \
if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then redis.call('decrby', KEYS[1], ARGV[1]); \
for i = 6, #ARGV, 1 do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); end; \
local ttl = redis.call('pttl', KEYS[1]); if ttl > 0 then redis.call('pexpire', KEYS[2], ttl); end; \
return 'OK'; end; \
local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); \
if v[1] ~= nil and v[2] ~= ARGV[4] then return ':' .. tostring(v[2]); end return nil;"
REDISSON_RELEASE="local expire = redis.call('zscore', KEYS[3], ARGV[1]);\
local removed = redis.call('zrem', KEYS[3], ARGV[1]);\
if tonumber(removed) ~= 1 then return 0;end;\
local value = redis.call('incrby', KEYS[1], ARGV[2]); \
redis.call(ARGV[4], KEYS[2], value); \
if tonumber(expire) <= tonumber(ARGV[3]) then return 0;end;return 1;"
redisson_acquire() { # NAME ID LEASE_MS
  local now; now=$(ms)
  rcli EVAL "$REDISSON_ACQUIRE" 3 "$1" "$(zset "$1")" "redisson_sc:{$1}" 1 $(( now + $3 )) "$now" 922337203685477 PUBLISH "$2"
}
redisson_release() { # NAME ID
  rcli EVAL "$REDISSON_RELEASE" 3 "$1" "redisson_sc:{$1}" "$(zset "$1")" "$2" 1 "$(ms)" PUBLISH
}
RID=9f86d081884c7d65
r acquire RS --limit 2 --owner mine
check "Redisson's tryAcquire takes the second permit" test "$(redisson_acquire RS "$RID" 30000)" = OK
check "RS: 0 free, 2 held (rlock's and Redisson's)" test "$(free_of RS) $(held RS)" = "0 2"
r acquire RS --limit 2 -n --owner third
expect_rc 75 "Redisson's permit counts against rlock's --limit 2"
check "Redisson's tryAcquire is refused while rlock holds the other (nearest lease answered)" \
  grep -q '^:' <<<"$(redisson_acquire RS other 30000)"
check "redis-cli SUBSCRIBEs to redisson_sc:{RS}" subscribe 'redisson_sc:{RS}' "$TEST_TMP/sc"
r release RS --limit 2 --owner mine
expect_rc 0 "rlock releases its permit"
check "rlock's release published the free count (1) on redisson_sc:{RS}, as Redisson's release" \
  wait_until 3 got_msg "$TEST_TMP/sc" 'redisson_sc:{RS}' 1
echo "  subscriber saw: $(tr '\n' ' ' <"$TEST_TMP/sc")"
r acquire RS --limit 2 -n --owner mine
W=$TEST_TMP/rsw
bg "$W" acquire RS --limit 2 -w 10s --owner waiter
sc_waiters() { [ "$(chan_subs 'redisson_sc:{RS}')" -ge 2 ]; }
check "an rlock waiter subscribes to redisson_sc:{RS}" wait_until 5 sc_waiters
t0=$(ms)
check "Redisson's tryRelease gives its permit back" test "$(redisson_release RS "$RID")" = 1
check "the rlock waiter gets the permit" wait_until 5 bg_done "$W"
d=$(( $(bg_t "$W") - t0 )); echo "  the rlock waiter took RS ${d}ms after Redisson's release"
# Only the message wakes it early: the permit it waits for is held for 30s.
check "... exit 0, woken by Redisson's message, not a lease end (${d}ms < 5000ms)" \
  eval '[ "$(bg_rc "$W")" = 0 ] && [ "$d" -lt 5000 ]'
r release RS --limit 2 --owner waiter
r release RS --limit 2 --owner mine

# --- 6 workers, --limit 3: never more than 3 inside, all 6 finish
LOG=$TEST_TMP/inside.log
: >"$LOG"
t0=$(ms)
for i in 1 2 3 4 5 6; do
  bg "$TEST_TMP/w$i" run LIM --limit 3 -w 30s -- sh -c '
    log() { echo "$1 $(date +%s%N) $$" >>"$2"; }
    log enter "$1"; sleep 1; log exit "$1"' sh "$LOG"
done
all_done() { local i; for i in 1 2 3 4 5 6; do bg_done "$TEST_TMP/w$i" || return 1; done; }
check "all 6 workers finish" wait_until 30 all_done
echo "  6 workers took $(( $(ms) - t0 ))ms"
rcs=$(for i in 1 2 3 4 5 6; do bg_rc "$TEST_TMP/w$i"; done | tr '\n' ' ')
check "every worker exits 0 ($rcs)" test "$rcs" = "0 0 0 0 0 0 "
max=$(python3 - "$LOG" <<'PY'
import sys
events = []
for line in open(sys.argv[1]):
    kind, t, pid = line.split()
    # at the same instant an exit comes first (it was logged before its release)
    events.append((int(t), 0 if kind == "exit" else 1))
inside = best = 0
for _, delta in sorted(events):
    inside += 1 if delta else -1
    best = max(best, inside)
print(best, len(events))
PY
)
echo "  most workers inside at once: ${max% *} (of 6; ${max#* } log lines)"
check "never more than 3 inside at once (max ${max% *})" test "${max% *}" -le 3
check "the limit was used: 3 inside at once" test "${max% *}" -eq 3
check "12 log lines (6 enter, 6 exit)" test "${max#* }" = 12
check "LIM: 3 free, none held, no records" test "$(free_of LIM) $(held LIM) $(rcli EXISTS "$(recs LIM)")" = "3 0 0"

# --- a SIGKILLed holder (the whole rlock tree, supervisor included): its permit
# returns when its lease ends, and a waiter gets it then
T=$TEST_TMP/kill
bg "$T" run K --limit 1 --ttl 2s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
guardian=$BG_PID
child=$(pid_of "$T.sh.pid")
supervisor=$(pgrep -P "$guardian" | head -1)
keeper=$(pgrep -P "$supervisor" | head -1)
check "the tree is up (rlock $guardian, supervisor $supervisor, keeper $keeper, child $child)" \
  eval 'alive "$guardian" && alive "$supervisor" && alive "$keeper" && alive "$child"'
victim=$(rcli ZRANGE "$(zset K)" 0 -1)
check "K's one permit is held ($victim)" test "$(held K) $(free_of K)" = "1 0"
sleep 1.1 # a renewal (every TTL/3) has moved the lease end
# The four die as one (a machine's crash): stopped first, then killed. A kill
# of one pid after another lets a survivor see its parent die and release the
# permit at once (what a guardian is for), if the shell is preempted between
# them on a loaded machine.
kill -STOP "$supervisor" "$keeper" "$guardian" "$child"
end=$(score K "$victim") # nobody renews it any more
t_kill=$(ms); kill_srv=$(server_ms)
kill -9 "$supervisor" "$keeper" "$guardian" "$child"
check "K's permit was still held when its tree died (lease end ${end:-none})" test -n "$end"
W=$TEST_TMP/kw
bg "$W" acquire K --limit 1 -w 10s --owner after-kill
check "the killed tree is gone" wait_until 2 dead_all "$supervisor" "$keeper" "$guardian" "$child"
check "the waiter gets K's permit" wait_until 8 bg_done "$W"
dw=$(( $(bg_t "$W") - t_kill )); left=$(( end - kill_srv ))
echo "  permit returned ${dw}ms after SIGKILL (its lease had ${left}ms left; TTL 2s)"
check "the waiter exits 0 (got $(bg_rc "$W"))" test "$(bg_rc "$W")" = 0
check "it came back at the lease end, not before (${dw}ms >= ${left}ms - 50)" test "$dw" -ge $(( left - 50 ))
check "and by the lease end (woken then, not at -w 10s: ${dw}ms <= ${left}ms + 2000)" test "$dw" -le $(( left + 2000 ))
check "the killed holder's permit and record are gone" \
  test "$(score K "$victim")|$(rcli HEXISTS "$(recs K)" "$victim")" = "|0"
r release K --limit 1 --owner after-kill

# --- run --limit 1 whose permit is removed from the zset mid-run: stopped, 76
T=$TEST_TMP/lost
bg "$T" run M --limit 1 --ttl 1.5s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
child=$(pid_of "$T.sh.pid")
token=$(rcli ZRANGE "$(zset M)" 0 -1)
check "the run holds M's permit ($token)" test -n "$token"
sleep 0.3
t0=$(ms)
rcli ZREM "$(zset M)" "$token" >/dev/null
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t0 )); echo "  rlock exited ${d}ms after its permit was removed (TTL/3 = 500ms)"
check "exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
# The next renewal (TTL/3 = 500ms) finds it gone; the bound adds a lease for a
# loaded machine (bench/run --only reaction: the idle figure).
check "by the next renewal (${d}ms <= TTL/3 + TTL = 2000ms)" test "$d" -le 2000
check "the child is gone" wait_until 1 dead "$child"
check "stderr names the loss" grep -q '^rlock: .*lost\|gone' "$T.err"
check "the permit was not re-created" test "$(held M)" = 0

# --- force-unlock of a semaphore name (NAME deleted): its permits are void, a
# run holding one is stopped (76), and the next --limit starts afresh
T=$TEST_TMP/fu
bg "$T" run FU --limit 2 --ttl 1.5s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 600' sh "$T"
child=$(pid_of "$T.sh.pid")
r acquire FU --limit 2 --owner other --ttl 60s
check "FU: both permits held (the run's and other's)" test "$(free_of FU) $(held FU)" = "0 2"
t0=$(ms)
r force-unlock FU
expect_rc 0 "force-unlock FU"
check "rlock exits" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t0 )); echo "  rlock exited ${d}ms after the force-unlock (TTL/3 = 500ms)"
check "exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "the child is gone" wait_until 1 dead "$child"
r renew FU --limit 2 --owner other
expect_rc 1 "the other holder's renewal finds its permit void"
r acquire FU --limit 2 --owner fresh --json
expect_rc 0 "the next --limit 2 creates FU afresh"
check "FU: 1 free, 1 held (fresh), the void permits and records dropped" \
  test "$(free_of FU) $(rcli ZRANGE "$(zset FU)" 0 -1) $(rcli HKEYS "$(recs FU)")" = "1 fresh fresh"

# --- issue 19 defect 7: a permit whose lease has ended is not a holder. Its
# entry stays in {NAME}:timeout until the next acquisition gives it back;
# before the fix status said "held": true with a negative ttl_ms, exit 0.
r acquire EXP --limit 2 --owner e1 --ttl 60s
rcli ZADD "$(zset EXP)" XX "$(( $(date +%s%3N) - 3000 ))" e1 >/dev/null
r status EXP --json
expect_rc 1 "status of a semaphore whose last permit expired: exit 1 (free)"
check "... held false, no holders, 2 permits free" "$PY" -c '
import json,sys; d=json.loads(sys.argv[1])["locks"][0]
assert d["held"] is False and d["holders"] == [] and d["permits_free"] == 2, d' "$OUT"
r status EXP
check "the text says no permit is held (rc $RC)" eval '[ "$RC" = 1 ] && [[ $OUT != *e1* ]]'
r acquire EXP2 --limit 2 --owner live --ttl 60s
r acquire EXP2 --limit 2 --owner dead --ttl 60s
rcli ZADD "$(zset EXP2)" XX "$(( $(date +%s%3N) - 3000 ))" dead >/dev/null
r status EXP2 --json
check "a semaphore with one live and one expired permit: held, one holder, 1 free (rc $RC)" "$PY" -c '
import json,sys; d=json.loads(sys.argv[1])["locks"][0]
assert d["held"] is True and [h["owner"] for h in d["holders"]] == ["live"] and d["permits_free"] == 1, d' "$OUT"

finish
