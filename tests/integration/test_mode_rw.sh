#!/usr/bin/env bash
# -s/--shared and --write: Redisson's RReadWriteLock layout. Readers share, a
# writer waits for every reader and keeps new rlock readers out while it waits
# (writer preference); rlock and Redisson's own read/write scripts (driven with
# redis-cli EVAL, their text copied from Redisson as a fixture) exclude each
# other; unlock messages on redisson_rwlock:{NAME} ('1' write, '0' read); no
# re-entry across layouts; renew, loss (76), re-entry, resend, --sync-replicas.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

ROWNER=8743c9c0-0795-4907-87fd-6c719a6b4586:1 # a Redisson lock name (client id:thread id)

# --- Redisson's scripts, verbatim from RedissonReadLock / RedissonWriteLock /
# ReadLockTask (Redisson master, 2026-08): this test plays the Java client.
RS_READ_LOCK="local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'read'); redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('set', KEYS[2] .. ':1', 1); redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); local key = KEYS[2] .. ':' .. ind;redis.call('set', key, 1); redis.call('pexpire', key, ARGV[1]); local remainTime = redis.call('pttl', KEYS[1]); redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); return nil; end;return redis.call('pttl', KEYS[1]);"
RS_READ_UNLOCK="local val = redis.call('get', KEYS[5]); if val ~= false then return tonumber(val);end; local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call(ARGV[3], KEYS[2], ARGV[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[4]); return nil; end; local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); if (lockExists == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; local keys = redis.call('hkeys', KEYS[1]); for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); maxRemainTime = math.max(remainTime, maxRemainTime);end; end; end; if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); redis.call('set', KEYS[5], 0, 'px', ARGV[4]); return 0; end;if mode == 'write' then redis.call('set', KEYS[5], 0, 'px', ARGV[4]); return 0;end; end; redis.call('del', KEYS[1]); redis.call(ARGV[3], KEYS[2], ARGV[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[4]); return 1; "
RS_WRITE_LOCK="local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'write'); redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (mode == 'write') then if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); local currentExpire = redis.call('pttl', KEYS[1]); redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); return nil; end; end;return redis.call('pttl', KEYS[1]);"
RS_WRITE_UNLOCK="local val = redis.call('get', KEYS[3]); if val ~= false then return tonumber(val);end; local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call(ARGV[4], KEYS[2], ARGV[1]); redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return nil; end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[3], 0, 'px', ARGV[5]); return 0; else redis.call('hdel', KEYS[1], ARGV[3]); if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); else redis.call('hset', KEYS[1], 'mode', 'read'); end; redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1; end; end; end; return nil;"
RS_READ_RENEW="local result = {} local argIdx = 2 for i = 1, #KEYS, 2 do local anyAlive = false; local lockNamesCount = tonumber(ARGV[argIdx]); argIdx = argIdx + 1; for k = 1, lockNamesCount do local counter = redis.call('hget', KEYS[i], ARGV[argIdx]); if (counter ~= false) then anyAlive = true; for c=counter, 1, -1 do redis.call('pexpire', KEYS[i+1] .. ':' .. ARGV[argIdx] .. ':rwlock_timeout:' .. c, ARGV[1]); end; end; argIdx = argIdx + 1; end; if (anyAlive) then redis.call('pexpire', KEYS[i], ARGV[1]); table.insert(result, 1); else table.insert(result, 0); end; end; return result;"
latch_id=0
next_latch() { latch_id=$((latch_id + 1)); echo "redisson_unlock_latch:{$1}:t$latch_id"; }
# Each prints what Redisson's script answered: '' (nil) = acquired / not held, a number = busy (PTTL) or unlock result.
rs_read_lock() { rcli EVAL "$RS_READ_LOCK" 2 "$1" "{$1}:$2:rwlock_timeout" "$3" "$2" "$2:write"; }
rs_read_unlock() {
  rcli EVAL "$RS_READ_UNLOCK" 5 "$1" "redisson_rwlock:{$1}" "{$1}:$2:rwlock_timeout" "{$1}" "$(next_latch "$1")" 0 "$2" PUBLISH 30000
}
rs_write_lock() { rcli EVAL "$RS_WRITE_LOCK" 1 "$1" "$3" "$2:write"; }
rs_write_unlock() {
  rcli EVAL "$RS_WRITE_UNLOCK" 3 "$1" "redisson_rwlock:{$1}" "$(next_latch "$1")" 1 30000 "$2:write" PUBLISH 30000
}
rs_read_renew() { rcli EVAL "$RS_READ_RENEW" 2 "$1" "{$1}" "$3" 1 "$2"; }

hfields() { rcli HKEYS "$1" | sort | tr '\n' ' '; }
pttl() { rcli PTTL "$1"; }
has_intent() { [ "$(rcli ZCARD "rlock_write_intent:{$1}")" -ge 1 ]; }
no_intent() { [ "$(rcli EXISTS "rlock_write_intent:{$1}")" = 0 ]; }
# line LOG TEXT: the line number of TEXT in LOG (99999 when absent)
line() { local n; n=$(grep -nxF "$2" "$1" | head -1 | cut -d: -f1); echo "${n:-99999}"; }
has_line() { grep -qxF "$2" "$1"; }
lines_of() { grep -c "^$2" "$1" 2>/dev/null || true; }

# ===== three `run -s` readers inside together, then a --write waiter, with
# a late reader that must not overtake it
LOG=$TEST_TMP/rw.log; GO=$TEST_TMP/rw.go
: >"$LOG"
# A reader logs "enter", waits (at most 5s) until all three entered, logs
# "together N", waits (at most 20s) for GO, logs "exit".
READER='echo "enter $1" >>"$2"; i=0
while [ "$(grep -c "^enter r" "$2")" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
echo "together $1 $(grep -c "^enter r" "$2")" >>"$2"; i=0
while [ ! -e "$3" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
echo "exit $1" >>"$2"'
for n in 1 2 3; do
  bg "$TEST_TMP/r$n" run -s RW --ttl 3s -w 10s -- sh -c "$READER" sh "r$n" "$LOG" "$GO"
done
all_in() { [ "$(lines_of "$LOG" together)" = 3 ]; }
check "three run -s readers are inside RW together" wait_until 10 all_in
check "each saw all three inside: $(grep together "$LOG" | tr '\n' ' ')" \
  test "$(grep -c '^together r[123] 3$' "$LOG")" = 3
check "RW is Redisson's read layout: mode=read and three owner fields" \
  test "$(rcli HGET RW mode)/$(rcli HLEN RW)" = "read/7"
check "each reader has its level key {RW}:OWNER:rwlock_timeout:1" \
  test "$(rcli --scan --pattern '{RW}:*:rwlock_timeout:1' | wc -l)" = 3
fences=$(rcli HGETALL RW | grep -o '"fence":[0-9]*' | sort -u | wc -l)
check "each reader took its own fencing token (3 distinct)" test "$fences" = 3

bg "$TEST_TMP/w" run --write RW -w 20s -- sh -c 'echo "enter W" >>"$1"; sleep 0.3; echo "exit W" >>"$1"' sh "$LOG"
check "the --write waiter records its intent (rlock_write_intent:{RW})" wait_until 5 has_intent RW
ip=$(pttl 'rlock_write_intent:{RW}')
check "the intent lives a few seconds only (PTTL ${ip}ms <= 5000)" between "$ip" 1 5000
r acquire -s RW -n --owner late
expect_rc 75 "a new reader (-n) is busy while a writer waits"
check "... and is told a writer is waiting, not only who reads (issue 19)" grep -q 'busy: a writer is waiting' <<<"$ERR"
check "the busy new reader left nothing" test -z "$(rcli HGET RW late)"
bg "$TEST_TMP/r4" run -s RW -w 20s -- sh -c 'echo "enter r4" >>"$1"' sh "$LOG"
sleep 1.5
check "neither the writer nor the late reader entered while the readers are in" \
  eval '! has_line "$LOG" "enter W" && ! has_line "$LOG" "enter r4"'
check "the writer is still waiting (intent refreshed: PTTL $(pttl 'rlock_write_intent:{RW}') > 3000)" \
  test "$(pttl 'rlock_write_intent:{RW}')" -gt 3000
r acquire -s RW --owner r-renter 2>/dev/null
expect_rc 75 "yet another new reader is busy too"
t_go=$(ms)
touch "$GO"
check "the writer gets in" wait_until 10 has_line "$LOG" "enter W"
check "the late reader gets in after it" wait_until 10 has_line "$LOG" "enter r4"
cat "$LOG" | tr '\n' ' ' | sed 's/^/  log: /'; echo
for n in 1 2 3; do
  check "reader r$n exited before the writer entered" test "$(line "$LOG" "exit r$n")" -lt "$(line "$LOG" "enter W")"
done
check "the late reader entered after the writer exited (did not overtake it)" \
  test "$(line "$LOG" "enter r4")" -gt "$(line "$LOG" "exit W")"
for f in r1 r2 r3 w r4; do wait_until 10 bg_done "$TEST_TMP/$f"; done
check "all five runs exit 0: $(for f in r1 r2 r3 w r4; do printf '%s ' "$(bg_rc "$TEST_TMP/$f")"; done)" \
  test "$(for f in r1 r2 r3 w r4; do bg_rc "$TEST_TMP/$f"; done | sort -u)" = 0
check "RW is free afterwards, no intent, no reader key left" \
  eval 'key_gone RW && no_intent RW && [ -z "$(rcli --scan --pattern "{RW}:*")" ]'

# ===== a writer that gives up withdraws its intent and wakes the readers it kept out
r acquire -s GU --owner holder --ttl 30s
bg "$TEST_TMP/gw" acquire --write GU -w 2s --owner gw
check "writer waiting on GU (intent recorded)" wait_until 5 has_intent GU
bg "$TEST_TMP/gr" acquire -s GU -w 15s --owner gr
sleep 0.5
check "the new reader waits behind the writer" test ! -e "$TEST_TMP/gr.rc"
check "the writer gives up after 2s (75)" wait_until 5 bg_done "$TEST_TMP/gw"
check "the writer exited 75 (got $(bg_rc "$TEST_TMP/gw"))" test "$(bg_rc "$TEST_TMP/gw")" = 75
t_gw=$(bg_t "$TEST_TMP/gw")
check "its intent is gone" no_intent GU
check "the waiting reader gets in" wait_until 5 bg_done "$TEST_TMP/gr"
d=$(( $(bg_t "$TEST_TMP/gr") - t_gw ))
check "reader exited 0, ${d}ms after the writer gave up (< 1000ms + SLACK_MS: woken by '1')" \
  eval '[ "$(bg_rc "$TEST_TMP/gr")" = 0 ] && [ "$d" -lt $(( 1000 + SLACK_MS )) ]'
check "GU now has two readers" test "$(rcli HGET GU holder)/$(rcli HGET GU gr)" = "1/1"

# ===== a writer that dies: its intent lapses within ~5s by itself
r acquire -s KD --owner holder --ttl 60s
python3 -c 'import os,sys; os.execv(sys.argv[1], sys.argv[1:])' "$RLOCK" acquire --write KD -w 60s --owner dying \
  >/dev/null 2>&1 &
DPID=$!; _pids+=("$DPID")
check "the writer is waiting on KD" wait_until 5 has_intent KD
{ kill -9 "$DPID"; wait "$DPID"; } 2>/dev/null
t0=$(ms)
r acquire -s KD -w 15s --owner after
d=$(( $(ms) - t0 ))
expect_rc 0 "a reader gets in after the dead writer's intent lapsed"
check "within the intent's 5s life, not the -w 15s (${d}ms <= 5000ms + SLACK_MS)" test "$d" -le $(( 5000 + SLACK_MS ))
echo "  reader entered ${d}ms after the writer was killed"

# ===== --write re-entry, downgrade, and the unlock messages
subscribe 'redisson_rwlock:{WR}' "$TEST_TMP/sub_wr"
r acquire --write WR --owner w --ttl 20s --json
expect_rc 0 "--write takes WR"
fence1=$(jget "$OUT" fence)
check "field w:write = 1, mode write, rlock:meta" test "$(hfields WR)" = "mode rlock:meta w:write "
r acquire --write WR --owner w --ttl 5s --json
expect_rc 0 "--write re-entry"
check "re-entry: count 2, same fence, lease not shortened" \
  eval '[ "$(jget "$OUT" count)" = 2 ] && [ "$(jget "$OUT" reentered)" = true ] && [ "$(jget "$OUT" fence)" = "$fence1" ] && [ "$(rcli HGET WR w:write)" = 2 ] && [ "$(pttl WR)" -gt 15000 ]'
r acquire -s WR --owner other -n
expect_rc 75 "-s by another owner while written: busy"
check "the busy message says it is held for writing" grep -q 'for writing' <<<"$ERR"
check "... without telling a reader to take it with --write (issue 30)" eval '! grep -q "take it with" <<<"$ERR"'
r acquire WR --owner other -n
expect_rc 75 "a plain acquire while written: busy"
check "... a plain lock is told which flag takes it" grep -q 'for writing (Redisson RReadWriteLock; take it with --write)' <<<"$ERR"
r acquire -s WR --owner w --json
expect_rc 0 "the writer takes the read side too (downgrade, as Redisson allows)"
check "downgrade: a new fence for the read hold" test "$(jget "$OUT" fence)" -gt "$fence1"
r release --write WR --owner w
check "one write level released: count 1, no message yet" eval '[ "$(rcli HGET WR w:write)" = 1 ] && no_msg "$TEST_TMP/sub_wr"'
r release --write WR --owner w --json
expect_rc 0 "the last write level released"
check "WR is now a read lock of w's read hold (mode read, w:write and rlock:meta gone)" \
  test "$(rcli HGET WR mode) $(hfields WR)" = "read mode rlock:meta:w w "
check "the write unlock published '1' on redisson_rwlock:{WR}" wait_until 3 got_msg "$TEST_TMP/sub_wr" 'redisson_rwlock:{WR}' 1
r release -s WR --owner w
check "the read unlock deleted WR" key_gone WR
check "and published '0'" wait_until 3 got_msg "$TEST_TMP/sub_wr" 'redisson_rwlock:{WR}' 0
kill "$SUBPID" 2>/dev/null

subscribe 'redisson_rwlock:{WU}' "$TEST_TMP/sub_wu"
r acquire --write WU --owner w
r release --write WU --owner w
check "write unlock (no readers) deleted WU" key_gone WU
check "Redisson's subscriber saw message '1' (READ_UNLOCK_MESSAGE)" wait_until 3 got_msg "$TEST_TMP/sub_wu" 'redisson_rwlock:{WU}' 1
kill "$SUBPID" 2>/dev/null
subscribe 'redisson_rwlock:{RU}' "$TEST_TMP/sub_ru"
r acquire -s RU --owner a; r acquire -s RU --owner b
r release -s RU --owner a
sleep 0.2
check "a reader leaving while another reads publishes nothing" no_msg "$TEST_TMP/sub_ru"
check "RU still held by b, its lease from b's level key" test "$(rcli HGET RU b)" = 1
r release -s RU --owner b
check "the last reader's unlock publishes '0' (UNLOCK_MESSAGE)" wait_until 3 got_msg "$TEST_TMP/sub_ru" 'redisson_rwlock:{RU}' 0
kill "$SUBPID" 2>/dev/null

# ===== no re-entry across layouts
r acquire -s X --owner t
r acquire X --owner t
expect_rc 75 "plain acquire of a read-write name is busy, even with the reader's own token"
check "the message names the read-write lock" grep -q 'read-write lock' <<<"$ERR"
r release X --owner t
expect_rc 1 "plain release --owner T of a read lock exits 1"
check "saying it is held as a read-write lock (give -s)" grep -q 'read-write lock held for reading.*give -s' <<<"$ERR"
r renew X --owner t
expect_rc 1 "plain renew of a read lock exits 1"
r release --write X --owner t
expect_rc 1 "release --write of t's read hold exits 1 (it holds the read side)"
r release -s X --owner t
expect_rc 0 "release -s works"

r acquire P --owner t
r acquire -s P --owner t
expect_rc 75 "-s on a plain RLock is busy, even with the holder's own token"
check "the message says it is a plain lock" grep -q 'plain lock' <<<"$ERR"
r acquire --write P --owner t -n
expect_rc 75 "--write on a plain RLock is busy, even with the holder's own token"
r acquire -s P --json -n
check "--json busy: held_as exclusive" test "$(jget "$OUT" held_as)" = exclusive
r release -s P --owner t
expect_rc 1 "release -s of a plain lock exits 1 (another layout)"
check "the plain lock is untouched" test "$(hfields P)" = "rlock:meta t "
rcli HINCRBY RP "$ROWNER" 1 >/dev/null; rcli PEXPIRE RP 30000 >/dev/null
r acquire -s RP --owner "$ROWNER" -n
expect_rc 75 "-s on Redisson's own RLock is busy with its token"
check "Redisson's RLock is untouched" test "$(hfields RP)" = "$ROWNER "
rcli SET FS x >/dev/null
r acquire -s FS -n
expect_rc 75 "-s on a foreign string key is busy"
check "the message says foreign string" grep -q 'foreign string' <<<"$ERR"
check "the string is untouched" test "$(rcli GET FS)" = x

# ===== renew -s extends the reader's level keys and the hash
r acquire -s RN --owner o --ttl 10s
r acquire -s RN --owner o --ttl 10s
r renew -s RN --owner o --ttl 60s --json
expect_rc 0 "renew -s"
k1=$(pttl '{RN}:o:rwlock_timeout:1'); k2=$(pttl '{RN}:o:rwlock_timeout:2'); h=$(pttl RN)
check "both level keys and the hash now ~60s (${k1} ${k2} ${h})" \
  eval '[ "$k1" -gt 59000 ] && [ "$k2" -gt 59000 ] && [ "$h" -gt 59000 ]'
check "renew -s --json: ttl_ms 60000" test "$(jget "$OUT" ttl_ms)" = 60000
r renew -s RN --owner o --ttl 5s
check "while re-entered, renew never shortens ($(pttl '{RN}:o:rwlock_timeout:1'))" test "$(pttl '{RN}:o:rwlock_timeout:1')" -gt 55000
r release -s RN --owner o
r renew -s RN --owner o --ttl 2s
check "one level: renew may shorten (hold-min) and the hash follows: $(pttl RN)" \
  eval '[ "$(pttl RN)" -le 2000 ] && [ "$(pttl "{RN}:o:rwlock_timeout:1")" -le 2000 ]'
r renew -s RN --owner nobody
expect_rc 1 "renew -s by a non-holder exits 1"
r renew --write RN --owner o
expect_rc 1 "renew --write of a read hold exits 1"

# ===== run -s whose hold is force-unlocked is stopped with 76
T=$TEST_TMP/lost
bg "$T" run -s LS --ttl 1.5s -- sh -c 'echo $$ >$1.sh.pid; exec sleep 60' sh "$T"
child=$(pid_of "$T.sh.pid")
sleep 0.3
t0=$(ms)
r force-unlock LS
rcli --scan --pattern '{LS}:*' | xargs -r redis-cli -h 127.0.0.1 -p "$REDIS_PORT" DEL >/dev/null
check "run -s exits" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t0 ))
check "run -s exits 76 after losing its read hold (got $(bg_rc "$T"), ${d}ms)" test "$(bg_rc "$T")" = 76
check "the child is gone" wait_until 2 dead "$child"
check "stderr says the lock is gone" grep -q 'gone' "$T.err"

# ===== Redisson's read/write locks and rlock exclude each other
# Redisson reader in, rlock reader joins, rlock writer busy; Redisson's
# renewal and unlock with rlock's fields present.
check "Redisson read lock on a free name: acquired (nil)" test -z "$(rs_read_lock RX "$ROWNER" 30000)"
r acquire -s RX --owner rl --ttl 40s
expect_rc 0 "rlock -s joins Redisson's readers"
r acquire --write RX --owner rw -n
expect_rc 75 "rlock --write is busy while Redisson reads"
check "Redisson's read renewal still works with rlock's fields (answers 1)" test "$(rs_read_renew RX "$ROWNER" 30000)" = 1
check "Redisson's read unlock answers 0 (others still read)" test "$(rs_read_unlock RX "$ROWNER")" = 0
check "it kept rlock's reader: fields now mode, rl, rlock:meta:rl" test "$(hfields RX)" = "mode rl rlock:meta:rl "
h=$(pttl RX)
check "and set the hash lease from rlock's level key (${h}ms, 35-40s)" between "$h" 35000 40000
check "Redisson's write lock is busy (answers a PTTL)" test "$(rs_write_lock RX "$ROWNER" 30000)" -gt 0
r release -s RX --owner rl
check "RX free after rlock's reader left" key_gone RX
# a Redisson reader and an rlock reader in, Redisson's unlock deletes the hash
# when the rlock reader's level key is gone (the hash only held dead readers)
rs_read_lock RY "$ROWNER" 30000 >/dev/null
r acquire -s RY --owner rl --ttl 30s
rcli DEL '{RY}:rl:rwlock_timeout:1' >/dev/null
check "Redisson's read unlock with only rlock fields of a dead reader left deletes the hash (answers 1)" \
  eval '[ "$(rs_read_unlock RY "$ROWNER")" = 1 ] && key_gone RY'

# rlock reader in: Redisson's writer is busy, Redisson's reader joins
r acquire -s RZ --owner rl --ttl 30s
check "Redisson write lock on an rlock read lock: busy" test "$(rs_write_lock RZ "$ROWNER" 30000)" -gt 0
check "Redisson read lock joins rlock's reader" test -z "$(rs_read_lock RZ "$ROWNER" 30000)"
r release -s RZ --owner rl
check "rlock's read release leaves Redisson's reader in (hash kept)" test "$(hfields RZ)" = "$ROWNER mode "
check "Redisson's unlock of the last reader frees it (answers 1)" eval '[ "$(rs_read_unlock RZ "$ROWNER")" = 1 ] && key_gone RZ'

# rlock writer in: both Redisson sides are busy; Redisson writer in: both rlock sides busy
r acquire --write RW2 --owner w --ttl 30s
check "Redisson read lock on an rlock write lock: busy" test "$(rs_read_lock RW2 "$ROWNER" 30000)" -gt 0
check "Redisson write lock on an rlock write lock: busy" test "$(rs_write_lock RW2 "$ROWNER" 30000)" -gt 0
subscribe 'redisson_rwlock:{RW2}' "$TEST_TMP/sub_rw2"
r release --write RW2 --owner w
check "rlock's write unlock wakes Redisson's subscriber with '1'" wait_until 3 got_msg "$TEST_TMP/sub_rw2" 'redisson_rwlock:{RW2}' 1
kill "$SUBPID" 2>/dev/null
check "Redisson write lock on the freed name: acquired" test -z "$(rs_write_lock RW2 "$ROWNER" 30000)"
r acquire -s RW2 -n
expect_rc 75 "rlock -s on Redisson's write lock: busy"
r acquire --write RW2 -n
expect_rc 75 "rlock --write on Redisson's write lock: busy"
bg "$TEST_TMP/rsw" acquire --write RW2 -w 10s --owner after-redisson
check "an rlock writer waits on Redisson's write lock" wait_until 5 has_intent RW2
t0=$(ms)
check "Redisson's write unlock answers 1" test "$(rs_write_unlock RW2 "$ROWNER")" = 1
check "the rlock writer gets in" wait_until 5 bg_done "$TEST_TMP/rsw"
d=$(( $(bg_t "$TEST_TMP/rsw") - t0 ))
check "the rlock writer exited 0, ${d}ms after Redisson's unlock (< 1000ms + SLACK_MS: woken by '1')" \
  eval '[ "$(bg_rc "$TEST_TMP/rsw")" = 0 ] && [ "$d" -lt $(( 1000 + SLACK_MS )) ]'
check "and its intent is withdrawn" no_intent RW2
# Redisson's reader does not look at rlock's writer intent
r acquire -s RI --owner holder --ttl 30s
bg "$TEST_TMP/riw" acquire --write RI -w 3s --owner wi
check "rlock writer waiting on RI" wait_until 5 has_intent RI
check "Redisson's reader joins despite the intent (Redisson knows nothing of it)" test -z "$(rs_read_lock RI "$ROWNER" 30000)"
r acquire -s RI -n --owner rlock-reader
expect_rc 75 "while an rlock reader is kept out"
wait_until 6 bg_done "$TEST_TMP/riw"

# A write hold released by Redisson's write unlock with rlock's token (a
# shared token): Redisson leaves {mode=read, rlock:meta} behind; rlock sees
# nobody in it and takes it.
r acquire --write SH --owner "$ROWNER"
check "Redisson's write unlock of it answers 1" test "$(rs_write_unlock SH "$ROWNER")" = 1
check "Redisson left mode=read and rlock's record" test "$(hfields SH)" = "mode rlock:meta "
r acquire --write SH -n --owner next
expect_rc 0 "rlock treats a read-write hash without holders as free"

# ===== reader tokens, resends, --sync-replicas
r acquire -s TK --owner 'x:write' -n
expect_rc 64 "a reader's token ending in :write is a usage error"
check "and makes no lock" key_gone TK
check "saying why (one line)" eval 'one_err_line && grep -q "a reader.s token cannot" <<<"$ERR"'

SHA=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/rw_acquire.lua")
rw_eval() { # OP OWNER: one rw_acquire request (read side, given token) with latch OP
  rcli EVALSHA "$SHA" 4 RS 'redisson_lock_token:{RS}' "rlock_acquire_latch:{RS}:$1" 'rlock_write_intent:{RS}' \
    "$2" 30000 0 60000 h 1 cmd test read 0 5000 '{RS}' | tr '\n' ' '
}
a1=$(rw_eval op1 o); a2=$(rw_eval op1 o)
check "a resent acquire (same op) answers as the first, adding that an earlier send applied it ($a1 / $a2)" \
  test "$a2" = "${a1}1 "
check "and counts once (count 1)" test "$(rcli HGET RS o)" = 1
a3=$(rw_eval op2 o)
check "a new op re-enters (count 2: $a3)" test "$(rcli HGET RS o)" = 2

r acquire -s SY --owner s --sync-replicas 1/200ms
expect_rc 69 "-s with --sync-replicas 1 and no replica"
check "the read hold was undone (no lock, no level key)" eval 'key_gone SY && key_gone "{SY}:s:rwlock_timeout:1"'
r acquire --write SY --owner s --sync-replicas 1/200ms
expect_rc 69 "--write with --sync-replicas 1 and no replica"
check "the write hold was undone" key_gone SY

finish
