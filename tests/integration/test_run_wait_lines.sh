#!/usr/bin/env bash
# A -w waiter off a terminal (a CI job's log): one line when the wait begins,
# naming the holder, its host, pid and command and since when (the record's
# acquired_at, on the server's clock); nothing more while nothing changes; a
# line at once when the holder changes; -q: no line at all. acquire and run
# alike. (The once-a-minute pace is WaitLinePace's, unit-tested with made-up
# times: no test waits a minute.)
. "$(dirname "$0")/lib.sh"
start_redis
HOST=$(python3 -c 'import socket; print(socket.gethostname())')
utc() { "$PY" -c 'import sys, time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(sys.argv[1]) // 1000)))' "$1"; }
lines() { grep -c "^rlock: " "$1" 2>/dev/null || true; }

# --- held by H (acquire); X queued first (-w 20s: it gives up first, so the
# release names its turn), then W (run -w 50s: it gives up next, so it is
# told 'next' and looks again), A (acquire -w 1m) and Q (-q)
r acquire jobs --owner tok-h --ttl 1m
expect_rc 0 "H takes the lock"
since=$(utc "$(acquired_at_ms jobs)")
hpid=$(jget "$(rcli HGET jobs rlock:meta)" pid)
BG_ENV=(RLOCK_OWNER=tok-x)
bg "$TEST_TMP/x" run -w 20s jobs -- sleep 2
BG_ENV=()
check "X waits (its first line)" wait_until 10 eval '[ "$(lines "$TEST_TMP/x.err")" = 1 ]'
bg "$TEST_TMP/w" run -w 50s jobs -- true
bg "$TEST_TMP/a" acquire -w 1m --ttl 5s jobs
bg "$TEST_TMP/q" -q run -w 1m jobs -- true
check "W and A wait (one line each)" \
  wait_until 10 eval '[ "$(lines "$TEST_TMP/w.err")" = 1 ] && [ "$(lines "$TEST_TMP/a.err")" = 1 ]'
first=$(head -n 1 "$TEST_TMP/w.err")
hcmd=$(jget "$(rcli HGET jobs rlock:meta)" command)
check "W's first line: who, where, which process (acquire's: its parent), since when ($first)" \
  test "$first" = "rlock: waiting up to 50s for \"jobs\": held by tok-h on $HOST (pid $hpid, \"$hcmd\"), $(sed -n 's/.*"), \([0-9.ms]* left\);.*/\1/p' <<<"$first"); held since $since"
check "the line says the lease left" grep -qE '\), [0-9.ms]+ left; held since' <<<"$first"
check "A (acquire -w) says the same" grep -qF "rlock: waiting up to 1m for \"jobs\": held by tok-h on $HOST (pid $hpid" "$TEST_TMP/a.err"
check "no terminal controls off a terminal" eval '! grep -q $'"'"'[\r\x1b]'"'"' "$TEST_TMP/w.err"'
sleep 2
check "nothing more while the holder stays (W: $(lines "$TEST_TMP/w.err") line)" test "$(lines "$TEST_TMP/w.err")" = 1
check "-q: Q says nothing while it waits" test ! -s "$TEST_TMP/q.err"

# --- H releases: X's turn; W says at once that X holds it now
r release jobs --owner tok-h
expect_rc 0 "H releases"
# (W looks again k_turn_grace after 'next'; a build slow enough that X has not
# taken its turn by then, a sanitizer's, lets W take the lock first: then there
# was no holder change for W to see, and X's line says W holds it.)
check "W says the holder changed (or took the lock before X could)" \
  wait_until 10 eval '[ "$(lines "$TEST_TMP/w.err")" -ge 2 ] || { bg_done "$TEST_TMP/w" && ! bg_done "$TEST_TMP/x"; }'
if [ "$(lines "$TEST_TMP/w.err")" -ge 2 ]; then
  second=$(sed -n 2p "$TEST_TMP/w.err")
  check "its second line: still waiting, how long so far and to go, the new holder ($second)" \
    grep -qE "^rlock: still waiting for \"jobs\" \([0-9]+s so far, [0-9]+s to go\): held by tok-x on $HOST \(pid [0-9]+, \"sleep \*\*\*\"\)" <<<"$second"
else
  echo "  W took the lock before X (X slower than 'next''s grace): X's lines: $(tr '\n' '|' <"$TEST_TMP/x.err")"
  check "X's second line names W's run as the holder" wait_until 5 eval '[ "$(lines "$TEST_TMP/x.err")" -ge 2 ]'
fi
check "every waiter ends" wait_until 30 eval 'bg_done "$TEST_TMP/x" && bg_done "$TEST_TMP/w" && bg_done "$TEST_TMP/a" && bg_done "$TEST_TMP/q"'
check "each got the lock in turn (rc x/w/a/q: $(bg_rc "$TEST_TMP/x")/$(bg_rc "$TEST_TMP/w")/$(bg_rc "$TEST_TMP/a")/$(bg_rc "$TEST_TMP/q"))" \
  test "$(bg_rc "$TEST_TMP/x")/$(bg_rc "$TEST_TMP/w")/$(bg_rc "$TEST_TMP/a")/$(bg_rc "$TEST_TMP/q")" = 0/0/0/0
check "-q: Q printed nothing at all" test ! -s "$TEST_TMP/q.err"
check "every line W printed is a waiting line" eval '! grep -v "^rlock: \(still \)\?waiting" "$TEST_TMP/w.err"'

# --- a wait that runs out: its lines, then the busy error as before
r acquire solo --owner tok-s --ttl 1m
bg "$TEST_TMP/o" run -w 1s solo -- true
check "the short wait ends" wait_until 10 bg_done "$TEST_TMP/o"
check "it exits 75" test "$(bg_rc "$TEST_TMP/o")" = 75
check "its first line says the wait, its last the busy error" \
  eval 'head -n 1 "$TEST_TMP/o.err" | grep -q "^rlock: waiting up to 1s for \"solo\": held by tok-s" &&
        tail -n 1 "$TEST_TMP/o.err" | grep -q "still busy after waiting 1s"'
finish
