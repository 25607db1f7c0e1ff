#!/usr/bin/env bash
# --sync-replicas N[/DUR]: after acquire and renew, WAIT N DUR. With a replica the
# lock is on the replica when acquire returns; `run` holds and renews with it, and
# stops CMD (76) when renewals stop being acknowledged. Without enough replicas,
# acquire exits 69 after DUR with one stderr line and leaves no lock behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
. "$(dirname "$0")/topology.sh"
P=$(free_port)
start_node "$P"
start_replica_of "$P"
R=$REPLICA_PORT
PURL="redis://127.0.0.1:$P"
echo "  primary $P, replica $R"
on() { [ "$(ccli "$1" EXISTS "$2")" = 1 ]; }
off() { [ "$(ccli "$1" EXISTS "$2")" = 0 ]; }

# --- a primary with one replica: the lock is on the replica when acquire returns
r -u "$PURL" acquire X --sync-replicas 1 --ttl 30s
expect_rc 0 "acquire X --sync-replicas 1"
OWN=$OUT
got=$(ccli "$R" HGET X "$OWN")
check "the replica has X at once, no waiting (HGET X owner = '$got')" test "$got" = 1
r -u "$PURL" --sync-replicas 1/2s renew X --owner "$OWN" --ttl 40s
expect_rc 0 "renew X with --sync-replicas 1/2s before the subcommand"
pttl=$(ccli "$R" PTTL X)
check "the replica has the renewed lease at once (PTTL $pttl > 30000)" test "$pttl" -gt 30000
r -u "$PURL" release X --owner "$OWN"
expect_rc 0 "release X"
check "X is gone from the replica" wait_until 2 off "$R" X

r -u "$PURL" --json acquire XJ --sync-replicas 1
expect_rc 0 "acquire XJ --json --sync-replicas 1"
check "--json output is JSON" is_json "$OUT"
acked=$(jget "$OUT" replicas_acked 2>/dev/null)
check "--json has replicas_acked >= 1 (got '$acked')" test "${acked:-0}" -ge 1 2>/dev/null
check "--json says acquired" test "$(jget "$OUT" acquired 2>/dev/null)" = true
r -u "$PURL" release XJ --owner "$(jget "$OUT" owner)"

# run: CMD finds the lock on the replica at its start; renewals (every 0.5s) acknowledged
T=$TEST_TMP/run1
bg "$T" -u "$PURL" run RX --ttl 1.5s --sync-replicas 1 -- sh -c '
  test "$(redis-cli -h 127.0.0.1 -p "$1" EXISTS RX)" = 1 || exit 9
  sleep 2.2; exit 3' sh "$R"
check "the run ends" wait_until 8 bg_done "$T"
check "run --sync-replicas 1: exit is CMD's 3 (9: the replica lacked RX at CMD's start; got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 3
check "run --sync-replicas 1: no error on stderr" eval '! grep -q "^rlock: " "$T.err"'
check "RX is released" off "$P" RX

# run: the replica goes away mid-run; unacknowledged renewals are unconfirmed:
# CMD is stopped (76) before the lease, last confirmed when the replica left, could end
T=$TEST_TMP/run2
bg "$T" -u "$PURL" run RD --ttl 3s --sync-replicas 1/300ms -- sh -c 'echo $$ >"$1.sh.pid"; sleep 15; touch "$1.cmdend"' sh "$T"
cmd_pid=$(pid_of "$T.sh.pid")
check "RD is on the replica" wait_until 2 on "$R" RD
sleep 1.2 # one acknowledged renewal
t_cut=$(ms)
ccli "$R" REPLICAOF NO ONE >/dev/null
expect_lost_run "$T" "$cmd_pid" "$t_cut" "the replica went away (renewals not acknowledged)"
check "stopped within the 3s lease of the last acknowledged renewal (${LOST_MS}ms < 3000)" test "$LOST_MS" -lt 3000
check "stderr has an 'rlock: ' line about it" grep -q '^rlock: ' "$T.err"
sed 's/^/  run stderr: /' "$T.err" | head -n 3
ccli "$R" REPLICAOF 127.0.0.1 "$P" >/dev/null
check "the replica is back" wait_until 10 _link_up "$R"

# --- a standalone server (no replica): acquire exits 69 after DUR, leaves no lock
start_redis
check "the standalone server has no replica" eval 'rcli INFO replication | grep -q "^connected_slaves:0"'
t0=$(ms)
r acquire Y --sync-replicas 1
d=$(( $(ms) - t0 )); echo "  acquire Y --sync-replicas 1 (first, scripts not loaded yet): ${d}ms"
expect_rc 69 "acquire Y --sync-replicas 1 without a replica"
check "it took 1s, not much more (${d}ms in 900..1000 + SLACK_MS)" between "$d" 900 $(( 1000 + SLACK_MS ))
check "one 'rlock: ' line on stderr" one_err_line
check "it says how many acknowledged ($ERR)" grep -q '0 of 1 replica.* acknowledged' <<<"$ERR"
check "nothing on stdout" test -z "$OUT"
check "no lock Y left" key_gone Y
r status Y
expect_rc 1 "status Y: free"
t0=$(ms)
r acquire Y2 --sync-replicas 1
d=$(( $(ms) - t0 ))
expect_rc 69 "acquire Y2 --sync-replicas 1 (scripts loaded)"
check "1s, not much more (${d}ms in 900..1000 + SLACK_MS)" between "$d" 900 $(( 1000 + SLACK_MS ))
t0=$(ms)
r acquire Y3 --sync-replicas 1/300ms
d=$(( $(ms) - t0 ))
expect_rc 69 "acquire Y3 --sync-replicas 1/300ms"
check "0.3s, not much more (${d}ms in 250..300 + SLACK_MS)" between "$d" 250 $(( 300 + SLACK_MS ))
check "one stderr line naming the acknowledgements" eval 'one_err_line && grep -q acknowledged <<<"$ERR"'
r --json acquire Y4 --sync-replicas 1/300ms
expect_rc 69 "acquire Y4 --json --sync-replicas 1/300ms"
echo "  --json stdout on failure: '${OUT}'"
check "stdout is empty or JSON" eval '[ -z "$OUT" ] || is_json "$OUT"'
for y in Y Y2 Y3 Y4; do check "no lock $y left" key_gone "$y"; done
r status Y Y2 Y3 Y4
expect_rc 1 "status Y Y2 Y3 Y4: free"
echo "  keys left on the standalone server: $(rcli --no-raw KEYS '*' | sed 's/^[0-9]*) //' | tr -d '"' | sort | paste -sd' ')"
check "only fencing counters, latches and histories remain" \
  eval '! rcli KEYS "*" | grep -qvE "^(redisson_lock_token:|redisson_unlock_latch:|rlock_acquire_latch:|rlock_log:)"'
check "the history tells the undo: acquired, then released" \
  test "$(rcli XRANGE 'rlock_log:{Y}' - + | grep -xE 'acquired|released' | paste -sd' ')" = "acquired released"

# a re-entry that is not acknowledged undoes only itself
r acquire Z --owner zz --ttl 30s
expect_rc 0 "acquire Z (no --sync-replicas)"
r acquire Z --owner zz --sync-replicas 1/200ms
expect_rc 69 "re-entering Z with --sync-replicas 1/200ms"
check "Z is still held by zz, one level (count $(rcli HGET Z zz))" test "$(rcli HGET Z zz)" = 1
check "the message says only the new level was undone, not that it was released (issue 30)" \
  eval 'grep -q "only the new level was undone: the lock stays held by --owner zz, 1 level as before" <<<"$ERR" && ! grep -q "it was released" <<<"$ERR"'
r release Z --owner zz
expect_rc 0 "release Z"
check "Z is gone" key_gone Z

# --sync-replicas 0: no wait, works without a replica
t0=$(ms)
r acquire Z0 --sync-replicas 0
d=$(( $(ms) - t0 ))
expect_rc 0 "--sync-replicas 0 without a replica"
check "no wait (${d}ms < SLACK_MS)" test "$d" -lt "$SLACK_MS"
r release Z0 --owner "$OUT"

# --- bad values: usage errors, nothing sent
for v in -1 x 1/abc; do
  r acquire BAD --sync-replicas "$v"
  expect_rc 64 "--sync-replicas $v"
  check "--sync-replicas $v: one error line" one_err_line
done
check "no lock BAD" key_gone BAD

finish
