#!/usr/bin/env bash
# Several names with -w: the names already taken are kept alive (renewed every
# TTL/3) while the others are awaited, so nobody can take them meanwhile; once
# the last one is taken every lease is full, and `run`'s lease clock starts
# then (a wait longer than the TTL does not end the run as "lock lost"). A name
# taken and then lost during the wait ends the acquisition: the others are
# released, exit 76.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

owner_of() { rcli HKEYS "$1" | grep -v '^rlock:meta$' | head -n1; }

# intruder_kept_out NAME MODEFLAGS... : tries `acquire NAME -n` as another owner
# 10 times, 0.3s apart (about 3s: more than the 2s lease of the waiting
# acquisition); fails as soon as one attempt takes it.
intruder_kept_out() {
  local name=$1 i; shift
  for i in $(seq 1 10); do
    r acquire "$name" -n --owner intruder --ttl 20s "$@"
    if [ "$RC" != 75 ]; then
      echo "  intruder attempt $i on $name: rc $RC"
      return 1
    fi
    sleep 0.3
  done
  return 0
}

# --- acquire A B -w: A (taken first) is renewed while B is awaited
r acquire WB --owner other --ttl 5s
expect_rc 0 "another owner holds WB for 5s"
T=$TEST_TMP/ab
bg "$T" acquire WB WA -w 15s --ttl 2s
check "WA is taken first (bytewise order) while WB is busy" wait_until 5 key_there WA
check "while WB is awaited, an intruder never takes WA (sampled for ~3s, > the 2s lease)" intruder_kept_out WA
check "the acquisition is still waiting" eval '! bg_done "$T"'
r release WB --owner other
expect_rc 0 "the other owner releases WB"
check "the acquisition ends" wait_until 5 bg_done "$T"
check "it exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
TOK=$(cat "$T.out")
check "both held by its token ($TOK)" test "$(owner_of WA) $(owner_of WB)" = "$TOK $TOK"
pa=$(rcli PTTL WA); pb=$(rcli PTTL WB)
echo "  leases right after: WA ${pa}ms, WB ${pb}ms (--ttl 2s)"
check "WA's lease is full again once WB is taken (PTTL ${pa}ms > 1000ms)" test "$pa" -gt 1000
check "WB's lease is full (PTTL ${pb}ms > 1000ms)" test "$pb" -gt 1000
r release WA WB --owner "$TOK"
expect_rc 0 "release both"

# --- the same with --fair (a fair waiter keeps its place while the held name is renewed)
r acquire FB --fair --owner other --ttl 4s
expect_rc 0 "another owner holds FB (fair) for 4s"
T=$TEST_TMP/fair
bg "$T" acquire FB FA --fair -w 15s --ttl 2s
check "FA is taken first while FB is busy" wait_until 5 key_there FA
check "while FB is awaited, an intruder never takes FA (fair)" intruder_kept_out FA --fair
check "the fair acquisition ends once FB expires" wait_until 8 bg_done "$T"
check "it exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
TOK=$(cat "$T.out")
check "both held by its token" test "$(owner_of FA) $(owner_of FB)" = "$TOK $TOK"
r release FA FB --fair --owner "$TOK"
expect_rc 0 "release both (fair)"

# --- --limit 1 and --write: the same through the semaphore's and the read-write
# lock's renewals; with --owner, a name the owner already holds is re-entered
for mode in "--limit 1" "--write"; do
  tag=${mode//[^a-z0-9]/}
  r acquire "${tag}B" $mode --owner other --ttl 4s
  expect_rc 0 "another owner holds ${tag}B ($mode) for 4s"
  r acquire "${tag}A" $mode --owner mine --ttl 2s
  expect_rc 0 "owner 'mine' already holds ${tag}A ($mode)"
  T=$TEST_TMP/$tag
  bg "$T" acquire "${tag}B" "${tag}A" $mode --owner mine -w 15s --ttl 2s
  sleep 0.3
  check "while ${tag}B is awaited, an intruder never takes ${tag}A ($mode, re-entered)" intruder_kept_out "${tag}A" $mode
  check "the acquisition ends once ${tag}B expires ($mode)" wait_until 8 bg_done "$T"
  check "it exits 0 ($mode; got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
  r release "${tag}A" "${tag}B" $mode --owner mine
  expect_rc 0 "release both ($mode)"
done

# --- run -w with a wait longer than the TTL: CMD runs with both locks, exit 0
r acquire RB --owner other --ttl 4s
expect_rc 0 "another owner holds RB for 4s (twice the run's lease)"
T=$TEST_TMP/run
bg "$T" run -w 15s --ttl 2s RA RB -- sh -c '
  a=$(redis-cli -h 127.0.0.1 -p "$2" HEXISTS RA "$RLOCK_OWNER")
  b=$(redis-cli -h 127.0.0.1 -p "$2" HEXISTS RB "$RLOCK_OWNER")
  echo "$a $b" >"$1.held"; sleep 1' sh "$T" "$REDIS_PORT"
check "RA is taken first while RB is busy" wait_until 5 key_there RA
check "while RB is awaited, an intruder never takes RA (run)" intruder_kept_out RA
check "the run ends" wait_until 10 bg_done "$T"
check "run -w with a wait beyond the TTL exits 0, not 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
check "CMD ran holding both locks ($(cat "$T.held" 2>/dev/null))" test "$(cat "$T.held" 2>/dev/null)" = "1 1"
check "no loss reported" eval '! grep -q lost "$T.err"'
check "both released after the run" test "$(rcli EXISTS RA RB)" = 0

# --- Redis frozen for a moment during the wait: the waiter keeps waiting, and
# once the last name is taken every lease is confirmed and full
r acquire ZB --owner other --ttl 3s
expect_rc 0 "another owner holds ZB for 3s"
T=$TEST_TMP/frozen
bg "$T" acquire ZB ZA -w 15s --ttl 2s --io-timeout 300ms
check "ZA is taken first while ZB is busy" wait_until 5 key_there ZA
kill -STOP "$REDIS_PID"; sleep 1; kill -CONT "$REDIS_PID"
check "the acquisition ends once ZB expires" wait_until 8 bg_done "$T"
check "it exits 0 after Redis froze for 1s meanwhile (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
TOK=$(cat "$T.out")
check "both held by its token, ZA's lease full (PTTL $(rcli PTTL ZA)ms)" \
  eval '[ "$(owner_of ZA) $(owner_of ZB)" = "$TOK $TOK" ] && [ "$(rcli PTTL ZA)" -gt 1000 ]'

# --- a name taken, then lost during the wait: give up, release the rest, exit 76
r acquire LB --owner other --ttl 10s
expect_rc 0 "another owner holds LB"
T=$TEST_TMP/lost
bg "$T" acquire LB LA -w 15s --ttl 2s
check "LA is taken first while LB is busy" wait_until 5 key_there LA
rcli DEL LA >/dev/null
r acquire LA --owner thief --ttl 20s
expect_rc 0 "a thief takes LA after it was deleted"
check "the acquisition gives up" wait_until 5 bg_done "$T"
check "it exits 76: a name it held was lost while waiting (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "the message names LA" grep -q '"LA"' "$T.err"
check "LA still the thief's" test "$(owner_of LA)" = thief
check "LB still the other owner's" test "$(owner_of LB)" = other

# --- Redlock (3 masters): the same, through its own round loop
. "$(dirname "$0")/topology.sh"
redlock_setup 3
r "${TO[@]}" acquire GB --owner other --ttl 4s
expect_rc 0 "another owner holds GB on the Redlock for 4s"
T=$TEST_TMP/redlock
bg "$T" "${TO[@]}" acquire GB GA -w 15s --ttl 2s
check "GA is taken first on every master while GB is busy" wait_until 5 eval '[ "$(nodes_with_key GA)" = "0 1 2 " ]'
check "while GB is awaited, an intruder never takes GA (Redlock)" intruder_kept_out GA "${TO[@]}"
check "the Redlock acquisition ends once GB expires" wait_until 8 bg_done "$T"
check "it exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0
TOK=$(cat "$T.out")
check "GA and GB held by its token on every master" eval 'held_everywhere GA "$TOK" && held_everywhere GB "$TOK"'

# --- Redlock run of two names: a master restarted empty gets each lock back
# (the renewal of GX re-takes GX there, not the last name taken)
T=$TEST_TMP/redlock-run
bg "$T" "${TO[@]}" run GX GY --ttl 3s -- sleep 5
check "GX and GY held on every master" wait_until 5 eval '[ "$(nodes_with_key GX) $(nodes_with_key GY)" = "0 1 2  0 1 2 " ]'
restart_master_empty 2
check "both are back on the restarted master within two renewals" \
  wait_until 4 eval '[ "$(nodes_with_key GX 2) $(nodes_with_key GY 2)" = "2  2 " ]'
check "the run ends" wait_until 8 bg_done "$T"
check "it exits 0 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 0

finish
