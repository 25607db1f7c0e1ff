#!/usr/bin/env bash
# Redis Cluster (3 primaries, no replicas): rlock pointed at any node routes each
# lock by its slot (MOVED), lists the locks of every primary, wakes waiters with
# the sharded release message (SPUBLISH / SSUBSCRIBE on the serving node, both
# ways with Redisson), and keeps a lock and a running `run` through a slot
# migration (ASK while MIGRATING, MOVED after).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_cluster
P1=${CLUSTER_PORTS[0]} P2=${CLUSTER_PORTS[1]} P3=${CLUSTER_PORTS[2]}
url() { echo "redis://127.0.0.1:$1"; }
chan() { if [[ $1 == *"{"* ]]; then echo "redisson_lock__channel:$1"; else echo "redisson_lock__channel:{$1}"; fi; }
# (on the release channel, and the waiters' own: a plain waiter queued for its
# turn listens on both, and on the turns channel, lua/lib/turns.lua)
shard_subs() {
  echo $(( $(ccli "$1" PUBSUB SHARDNUMSUB "$(chan "$2")" | sed -n 2p) +
           $(ccli "$1" PUBSUB SHARDCHANNELS "$(chan "$2"):*" | grep -c .) ))
}
has_shard_sub() { [ "$(shard_subs "$1" "$2")" -ge 1 ] 2>/dev/null; }
no_shard_sub() { [ "$(shard_subs "$1" "$2")" = 0 ]; }
# on PORT KEY: the key exists on that node
on() { [ "$(ccli "$1" EXISTS "$2")" = 1 ]; }
off() { [ "$(ccli "$1" EXISTS "$2")" = 0 ]; }

# --- a lock on every primary, each through a node that does not serve it
declare -A NAME_ON=() OWNER_ON=()
for p in "$P1" "$P2" "$P3"; do
  n=$(name_on_port "$p" lk) || { echo "FAIL: no name found for port $p"; exit 1; }
  via=$(other_port "$p")
  NAME_ON[$p]=$n
  r -u "$(url "$via")" acquire "$n" --ttl 60s
  expect_rc 0 "acquire $n (slot on $p) via $via"
  OWNER_ON[$p]=$OUT
  check "$n is a hash on its node $p with the owner field" test "$(ccli "$p" HGET "$n" "$OUT")" = 1
  pttl=$(ccli "$p" PTTL "$n")
  check "$n has the 60s lease on $p ($pttl)" between "$pttl" 55000 60000
  r -u "$(url "$via")" status "$n"
  expect_rc 0 "status $n via $via: held"
  r -u "$(url "$(other_port "$via")")" acquire "$n" -n
  expect_rc 75 "acquire $n -n via the third node: busy"
  r -u "$(url "$via")" release "$n" --owner not-the-owner
  expect_rc 1 "release $n with a wrong owner via $via"
  check "$n still held on $p" on "$p" "$n"
done

# --- status with no names, through one node, lists the locks of all three primaries
r -u "$(url "$P1")" status
expect_rc 0 "status (no names) via $P1"
for p in "$P1" "$P2" "$P3"; do
  check "status via $P1 lists ${NAME_ON[$p]} (on $p)" grep -qw -- "${NAME_ON[$p]}" <<<"$OUT"
done
r -u "$(url "$P2")" --json status
expect_rc 0 "status --json (no names) via $P2"
check "status --json is JSON" is_json "$OUT"
listed=$(python3 -c 'import json,sys; print(" ".join(sorted(l["name"] for l in json.load(sys.stdin)["locks"] if l.get("held"))))' <<<"$OUT" 2>/dev/null)
for p in "$P1" "$P2" "$P3"; do
  check "status --json via $P2 has ${NAME_ON[$p]} held (listed: $listed)" grep -qw -- "${NAME_ON[$p]}" <<<"$listed"
done
r -u "$(url "$P3")" status "${NAME_ON[$P1]}" "${NAME_ON[$P2]}" "${NAME_ON[$P3]}"
expect_rc 0 "status of the three names at once via $P3: all held"

for p in "$P1" "$P2" "$P3"; do
  n=${NAME_ON[$p]}; via=$(other_port "$p")
  r -u "$(url "$via")" release "$n" --owner "${OWNER_ON[$p]}"
  expect_rc 0 "release $n via $via"
  check "$n is gone from $p" off "$p" "$n"
  r -u "$(url "$via")" status "$n"
  expect_rc 1 "status $n via $via after release: free"
done
r -u "$(url "$P1")" status "${NAME_ON[$P1]}" "${NAME_ON[$P2]}" "${NAME_ON[$P3]}"
expect_rc 1 "status of the three released names: free"

# --- a waiter via node A wakes within 1s of a release done via node C
W=$(name_on_port "$P2" wake)
r -u "$(url "$P3")" acquire "$W" --ttl 60s --owner holder
expect_rc 0 "holder takes $W (on $P2) via $P3, ttl 60s"
T=$TEST_TMP/wake
bg "$T" -u "$(url "$P1")" acquire "$W" -w 10s --owner waiter
check "the waiter (via $P1) SSUBSCRIBEs on $P2, the node serving $W" wait_until 5 has_shard_sub "$P2" "$W"
check "the waiter is still waiting" test ! -e "$T.rc"
sleep 0.5
t_rel=$(ms)
r -u "$(url "$P3")" release "$W" --owner holder
expect_rc 0 "holder releases $W via $P3"
check "the waiter finishes" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t_rel )); echo "  waiter got $W ${d}ms after the release started"
check "the waiter exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "the waiter woke at the release, not the 60s lease end (${d}ms < 1000ms + SLACK_MS)" test "$d" -lt $(( 1000 + SLACK_MS ))
check "the waiter holds $W on $P2" test "$(ccli "$P2" HGET "$W" waiter)" = 1
check "the waiter left no shard subscription" wait_until 2 no_shard_sub "$P2" "$W"
r -u "$(url "$P1")" release "$W" --owner waiter
expect_rc 0 "the waiter's lock is released"

# --- an SSUBSCRIBE client on the serving node sees rlock's release message
S=$(name_on_port "$P3" shard)
redis-cli -h 127.0.0.1 -p "$P3" SSUBSCRIBE "$(chan "$S")" >"$TEST_TMP/ssub.out" 2>&1 &
SSUB_PID=$!; _pids+=("$SSUB_PID")
check "redis-cli SSUBSCRIBEd to $(chan "$S") on $P3" wait_until 3 has_shard_sub "$P3" "$S"
# --- several names in different slots: taken one by one, each on its own node
M1=$(name_on_port "$P1" many) M2=$(name_on_port "$P2" many) M3=$(name_on_port "$P3" many)
r -u "$(url "$P1")" acquire "$M3" "$M1" "$M2" --ttl 30s --owner multi
expect_rc 0 "acquire of three names on three primaries"
check "each is on its own primary" eval 'on "$P1" "$M1" && on "$P2" "$M2" && on "$P3" "$M3"'
r -u "$(url "$P2")" release "$M1" "$M2" "$M3" --owner multi
expect_rc 0 "release of the three"
check "all three are gone" eval 'off "$P1" "$M1" && off "$P2" "$M2" && off "$P3" "$M3"'

r -u "$(url "$P1")" acquire "$S" --owner o1
expect_rc 0 "acquire $S via $P1"
r -u "$(url "$P1")" release "$S" --owner o1
expect_rc 0 "release $S via $P1"
got_smessage() { grep -qx smessage "$TEST_TMP/ssub.out"; }
check "the SSUBSCRIBE client got an smessage" wait_until 3 got_smessage
msg=$(grep -x -A2 smessage "$TEST_TMP/ssub.out" | head -n 3 | paste -sd' ')
check "the message is Redisson's unlock: channel $(chan "$S"), payload 0 (got: $msg)" \
  test "$msg" = "smessage $(chan "$S") 0"
kill "$SSUB_PID" 2>/dev/null

# --- Redisson's unlock (DEL + SPUBLISH ... 0 on the serving node) wakes an rlock waiter
R=$(name_on_port "$P1" redisson)
ccli "$P1" HSET "$R" "8743c9c0-0795-4907-87fd-6c719a6b4586:1" 1 >/dev/null
ccli "$P1" PEXPIRE "$R" 60000 >/dev/null
T=$TEST_TMP/rwake
bg "$T" -u "$(url "$P2")" acquire "$R" -w 10s --owner rw
check "the waiter (via $P2) SSUBSCRIBEs on $P1, the node serving $R" wait_until 5 has_shard_sub "$P1" "$R"
sleep 0.3
check "the waiter waits behind the Redisson holder" test ! -e "$T.rc"
t_rel=$(ms)
ccli "$P1" DEL "$R" >/dev/null
receivers=$(ccli "$P1" SPUBLISH "$(chan "$R")" 0)
check "SPUBLISH reached a subscriber ($receivers)" test "$receivers" -ge 1
check "the waiter finishes" wait_until 5 bg_done "$T"
d=$(( $(bg_t "$T") - t_rel )); echo "  waiter got $R ${d}ms after Redisson's unlock"
check "the waiter exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "woken by the SPUBLISHed unlock, not the 60s lease end (${d}ms < 1000ms + SLACK_MS)" test "$d" -lt $(( 1000 + SLACK_MS ))
check "the waiter holds $R on $P1" test "$(ccli "$P1" HGET "$R" rw)" = 1
r -u "$(url "$P2")" release "$R" --owner rw

# --- slot migration while a lock is held and a run renews another lock of the slot
A='{mig}a' B='{mig}b'
SLOT=$(slot_of "$A")
FROM=$(node_of_slot "$SLOT"); TO=$(other_port "$FROM"); VIA=$(other_port "$TO")
echo "  migrating slot $SLOT ($A, $B) from $FROM to $TO; rlock talks to $VIA"
check "$A and $B share slot $SLOT" test "$(slot_of "$B")" = "$SLOT"
r -u "$(url "$VIA")" acquire "$A" --ttl 30s
expect_rc 0 "acquire $A via $VIA"
OWN_A=$OUT
check "$A is on $FROM" on "$FROM" "$A"
T=$TEST_TMP/mig
bg "$T" -u "$(url "$VIA")" run "$B" --ttl 3s -- sh -c 'sleep 7; date +%s%3N >"$1.cmdend"' sh "$T"
check "$B is held on $FROM by run" wait_until 3 on "$FROM" "$B"
# PTTL of B on whichever node serves it, every ~100ms until CMD ends (at most 200 samples)
(
  for i in $(seq 1 200); do
    [ -e "$T.cmdend" ] && break
    v=$(ccli "$FROM" PTTL "$B" 2>/dev/null)
    [[ $v =~ ^-?[0-9]+$ ]] && [ "$v" -gt 0 ] || v=$(ccli_ask "$TO" PTTL "$B")
    echo "$(ms) $v"
    sleep 0.1
  done >"$T.pttl"
) &
_pids+=($!)
sleep 0.3

# renew_and_status SECONDS PHASE: renew A (--ttl SECONDS) through VIA, find the
# new lease on TO (ASKING reads it there in either phase), status A through VIA
# and through FROM.
renew_and_status() {
  r -u "$(url "$VIA")" renew "$A" --owner "$OWN_A" --ttl "$1s"
  expect_rc 0 "renew $A $2"
  local pttl; pttl=$(ccli_ask "$TO" PTTL "$A")
  check "renew reached $A on $TO (PTTL $pttl > $(( $1 - 10 ))000)" test "$pttl" -gt $(( ($1 - 10) * 1000 )) 2>/dev/null
  r -u "$(url "$VIA")" status "$A"
  expect_rc 0 "status $A $2"
  r -u "$(url "$FROM")" status "$A"
  expect_rc 0 "status $A via $FROM $2"
}
check "slot $SLOT: $TO IMPORTING, $FROM MIGRATING" slot_begin_migration "$SLOT" "$FROM" "$TO"
check "MIGRATE every key of slot $SLOT from $FROM to $TO in one call" slot_move_keys "$SLOT" "$FROM" "$TO"
echo "  moved: ${MIGRATED_KEYS[*]}"
check "no key of slot $SLOT is left on $FROM" test "$(ccli "$FROM" CLUSTER COUNTKEYSINSLOT "$SLOT")" = 0
check "$A is now on $TO" test "$(ccli_ask "$TO" EXISTS "$A")" = 1
# ASK path: FROM answers -ASK for the moved keys
sleep 0.2
renew_and_status 40 "while slot $SLOT is MIGRATING (ASK)"
r -u "$(url "$VIA")" status '{mig}free'
expect_rc 1 "status of a free name in the migrating slot"
sleep 1.5 # the run renews (every 1s) through ASK
check "the run goes on while MIGRATING" test ! -e "$T.rc"
check "$B still held on $TO (PTTL $(ccli_ask "$TO" PTTL "$B"))" test "$(ccli_ask "$TO" PTTL "$B")" -gt 0 2>/dev/null

check "CLUSTER SETSLOT $SLOT NODE $TO on every node" slot_assign "$SLOT" "$TO"
check "every node says $TO serves slot $SLOT" eval '[ "$(node_of_slot "$SLOT" "$P1")" = "$TO" ] && [ "$(node_of_slot "$SLOT" "$P2")" = "$TO" ] && [ "$(node_of_slot "$SLOT" "$P3")" = "$TO" ]'
# MOVED path
renew_and_status 50 "after the slot moved (MOVED)"
r -u "$(url "$FROM")" release "$A" --owner "$OWN_A"
expect_rc 0 "release $A via the old node $FROM (MOVED)"
check "$A is gone from $TO" off "$TO" "$A"
r -u "$(url "$VIA")" status "$A"
expect_rc 1 "status $A after release: free"

check "the run ends" wait_until 10 bg_done "$T"
check "the run exits 0: its renewals worked through the migration (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "CMD ran to its end" has_file "$T.cmdend"
wait_until 3 test -s "$T.pttl"
cmd_end=$(cat "$T.cmdend" 2>/dev/null || echo 0)
samples=$(awk -v e="$cmd_end" '$1 < e' "$T.pttl" | wc -l)
bad=$(awk -v e="$cmd_end" '$1 < e && !($2 ~ /^[0-9]+$/ && $2 > 0)' "$T.pttl" | head -n 3 | paste -sd' ')
min=$(awk -v e="$cmd_end" '$1 < e && $2 ~ /^[0-9]+$/ { if (m == "" || $2 < m) m = $2 } END { print m }' "$T.pttl")
echo "  $samples PTTL samples of $B while CMD ran; lowest $min"
check "PTTL of $B was sampled throughout ($samples >= 20)" test "$samples" -ge 20
check "$B was never lost while CMD ran (PTTL > 0 in every sample; bad: ${bad:-none})" test -z "$bad"
check "$B is released after the run" off "$TO" "$B"
check "nothing of slot $SLOT came back to $FROM" test "$(ccli "$FROM" CLUSTER COUNTKEYSINSLOT "$SLOT")" = 0
check "rlock's run said nothing on stderr" test ! -s "$T.err"
[ -s "$T.err" ] && sed 's/^/  run stderr: /' "$T.err" | head -n 5

# --- negative: a node that is down, braces that split the companion keys
r -u "redis://127.0.0.1:$(free_port)" status "${NAME_ON[$P1]}"
expect_rc 69 "a URL naming no server"
r -u "$(url "$P1")" acquire '{}x' --ttl 5s
check "a name whose companion keys land in another slot is refused (64, got $RC)" test "$RC" = 64

finish
