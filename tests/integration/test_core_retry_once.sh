#!/usr/bin/env bash
# A request sent twice (its reply was lost) is applied once, for every lock layout.
# (a) Through the real scripts: the same op id sent twice gives the same answer (a
#     latch answer adds that an earlier send applied it, issue 41) and
#     changes the lock once: final release, one level of a count-2 lock, --all,
#     force-unlock, acquire (fresh and re-entry, given token and own token), on
#     rlock-made locks and Redisson-made ones (a hash without rlock:meta).
# (b) End to end: a reply delayed past --io-timeout by a TCP proxy (tests/chaos/
#     proxy.py): rlock sends the request again with the same op id and answers as
#     if the first reply had come: one level dropped, exit 0, count +1. (force-unlock
#     reads the lock first, so a proxy cannot delay just its write: (a) covers it.)
. "$(dirname "$0")/lib.sh"
start_redis
ROWNER=8743c9c0-0795-4907-87fd-6c719a6b4586:1
sha_of() { rcli -x SCRIPT LOAD <"$RLOCK_LUA/$1.lua"; }
ACQ=$(sha_of acquire); REL=$(sha_of release); FU=$(sha_of force_unlock)
LATCH_MS=24000
# one-line answers of EVALSHA (redis-cli prints an array one element a line)
ev() { rcli EVALSHA "$@" | tr '\n' ' '; }
release_twice() { # NAME OWNER ALL OP: both answers, "A1|A2"
  local a1 a2
  a1=$(ev "$REL" 3 "$1" "redisson_lock__channel:{$1}" "redisson_unlock_latch:{$1}:$4" "$2" "$3" PUBLISH $LATCH_MS)
  a2=$(ev "$REL" 3 "$1" "redisson_lock__channel:{$1}" "redisson_unlock_latch:{$1}:$4" "$2" "$3" PUBLISH $LATCH_MS)
  echo "$a1|$a2"
}
acquire_once() { # NAME OWNER OWN_TOKEN OP
  ev "$ACQ" 3 "$1" "redisson_lock_token:{$1}" "rlock_acquire_latch:{$1}:$4" "$2" 30000 "$3" $LATCH_MS h 1 c v
}
redisson_lock() { # NAME COUNT: a lock as Redisson's RLock writes it (no rlock:meta)
  rcli DEL "$1" >/dev/null; rcli HSET "$1" "$ROWNER" "$2" >/dev/null; rcli PEXPIRE "$1" 30000 >/dev/null
}

# --- (a) the scripts, each layout and answer
for layout in rlock redisson; do
  make() { # NAME COUNT
    if [ $layout = rlock ]; then
      rcli DEL "$1" >/dev/null
      local i; for i in $(seq 1 "$2"); do "$RLOCK" acquire "$1" --owner "$ROWNER" >/dev/null; done
    else
      redisson_lock "$1" "$2"
    fi
  }
  make "F$layout" 1
  got=$(release_twice "F$layout" "$ROWNER" 0 op-final)
  check "$layout: final release sent twice answers 0 both times ($got)" test "$got" = "0 |0 "
  check "$layout: final release: the lock is gone" key_gone "F$layout"
  check "$layout: final release leaves its latch (PX ${LATCH_MS})" \
    between "$(rcli PTTL "redisson_unlock_latch:{F$layout}:op-final")" 1 $LATCH_MS

  make "L$layout" 2
  got=$(release_twice "L$layout" "$ROWNER" 0 op-level)
  check "$layout: one level of a count-2 lock sent twice answers 1 both times ($got)" test "$got" = "1 |1 "
  check "$layout: one level of a count-2 lock: count 1 (not deleted)" test "$(rcli HGET "L$layout" "$ROWNER")" = 1

  make "A$layout" 3
  got=$(release_twice "A$layout" "$ROWNER" 1 op-all)
  check "$layout: --all sent twice answers 0 both times ($got)" test "$got" = "0 |0 "
  check "$layout: --all: the lock is gone" key_gone "A$layout"

  make "X$layout" 1
  a1=$(ev "$FU" 3 "X$layout" "redisson_lock__channel:{X$layout}" "redisson_unlock_latch:{X$layout}:op-fu" PUBLISH $LATCH_MS)
  a2=$(ev "$FU" 3 "X$layout" "redisson_lock__channel:{X$layout}" "redisson_unlock_latch:{X$layout}:op-fu" PUBLISH $LATCH_MS)
  check "$layout: force-unlock sent twice answers '1 hash' both times ($a1|$a2)" test "$a1|$a2" = "1 hash |1 hash "

  # acquire with a given token: re-entry of this layout, twice with one op id
  make "R$layout" 1
  a1=$(acquire_once "R$layout" "$ROWNER" 0 op-re); a2=$(acquire_once "R$layout" "$ROWNER" 0 op-re)
  check "$layout: a re-entry sent twice gives the same answer, the resend's saying an earlier send applied it ($a1|$a2)" \
    test "$a2" = "${a1}1 " -a "${a1%% *}" = 2
  check "$layout: a re-entry sent twice counts once (count 2)" test "$(rcli HGET "R$layout" "$ROWNER")" = 2
  a3=$(acquire_once "R$layout" "$ROWNER" 0 op-re2)
  check "$layout: a new op id re-enters again (count 3)" test "$(rcli HGET "R$layout" "$ROWNER")" = 3
done

# a fresh acquisition with a given token, twice: one fencing token, count 1
rcli SET 'redisson_lock_token:{G}' 100 >/dev/null
a1=$(acquire_once G given-tok 0 op-g); a2=$(acquire_once G given-tok 0 op-g)
check "fresh acquisition (given token) sent twice gives the same answer, the resend's saying an earlier send applied it ($a1|$a2)" \
  test "$a2" = "${a1}1 " -a "${a1%% *}" = 1
check "fresh acquisition (given token) sent twice: count 1" test "$(rcli HGET G given-tok)" = 1
check "fresh acquisition (given token) sent twice: one fencing token (101)" test "$(rcli GET 'redisson_lock_token:{G}')" = 101
# the same with the client's own token: no latch, the token itself says it was applied
rcli SET 'redisson_lock_token:{O}' 200 >/dev/null
a1=$(acquire_once O own-tok 1 op-o); a2=$(acquire_once O own-tok 1 op-o2)
check "fresh acquisition (own token) sent twice: acquired both times ($a1|$a2)" \
  test "$(cut -d' ' -f1-3 <<<"$a1")" = "1 1 201" -a "$(cut -d' ' -f1-3 <<<"$a2")" = "1 1 201"
check "fresh acquisition (own token) sent twice: count 1, one fencing token" \
  test "$(rcli HGET O own-tok)" = 1 -a "$(rcli GET 'redisson_lock_token:{O}')" = 201
check "own token: no acquire latch is written" test -z "$(rcli --scan --pattern 'rlock_acquire_latch:{O}:*')"
a1=$(acquire_once O someone-else 0 op-busy)
check "busy answer (code 0) for another owner" test "${a1%% *}" = 0
check "a busy answer writes no latch" test -z "$(rcli --scan --pattern 'rlock_acquire_latch:{O}:op-busy')"

# --- (b) end to end: the first reply is lost (delayed past --io-timeout)
proxy_start
PURL=$PROXY_URL
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" MONITOR >"$TEST_TMP/mon" 2>/dev/null &
_pids+=($!)
wait_until 3 has_file "$TEST_TMP/mon"
# applied_on SHA NAME: how many times the server ran script SHA on NAME since MON_START
applied_on() { tail -n +"$MON_START" "$TEST_TMP/mon" | grep -c "\"EVALSHA\" \"$1\" \"[0-9]*\" \"$2\""; }
seen_once() { [ "$(applied_on "$1" "$2")" -ge 1 ]; }

# lost_reply SCRIPT NAME ARGS...: runs rlock ARGS through the proxy while replies
# are held 6s (--io-timeout 2s); as soon as the server has run SCRIPT's request
# (seen in MONITOR), the proxy lets replies through again: the resend is
# answered at once. Sets RC, OUT, ERR, SENT (SCRIPT requests rlock sent) and RAN
# (SCRIPT requests the server ran).
lost_reply() {
  local sha=$1 name=$2; shift 2
  MON_START=$(( $(wc -l <"$TEST_TMP/mon") + 1 ))
  proxy_mode delay-down 6000
  bg "$TEST_TMP/lost" -v -u "$PURL" --io-timeout 2s "$@"
  wait_until 5 seen_once "$sha" "$name"
  proxy_mode pass
  wait_until 15 bg_done "$TEST_TMP/lost"
  RC=$(bg_rc "$TEST_TMP/lost"); OUT=$(cat "$TEST_TMP/lost.out"); ERR=$(grep -v '^rlock: [0-9:.]* [<>]' "$TEST_TMP/lost.err")
  SENT=$(grep -c "^rlock: [0-9:.]* > EVALSHA $sha" "$TEST_TMP/lost.err")
  RAN=$(applied_on "$sha" "$name")
}
"$RLOCK" status warm >/dev/null 2>&1 # scripts are cached: the first request is the EVALSHA

redisson_lock RC2 2
lost_reply "$REL" RC2 release RC2 --owner "$ROWNER"
echo "  Redisson-made count-2 lock: rc $RC, sent $SENT, run by the server $RAN times; $ERR"
check "Redisson-made lock, reply lost: the release was sent twice" test "$SENT" = 2
check "Redisson-made lock, reply lost: the server ran it twice" test "$RAN" = 2
expect_rc 0 "Redisson-made lock, reply lost: release exits 0"
check "Redisson-made lock, reply lost: exactly one level dropped (count 1, not deleted)" \
  test "$(rcli HGET RC2 "$ROWNER")" = 1

"$RLOCK" acquire FIN --owner fin >/dev/null
lost_reply "$REL" FIN release FIN --owner fin --json
echo "  final release: rc $RC, sent $SENT, run $RAN times; $OUT $ERR"
check "final release, reply lost: sent twice, run twice" test "$SENT" = 2 -a "$RAN" = 2
expect_rc 0 "final release, reply lost: exits 0 (not 'not held')"
check "final release, reply lost: --json says released, remaining 0" \
  test "$(jget "$OUT" released)" = true -a "$(jget "$OUT" remaining)" = 0
check "final release, reply lost: the lock is gone" key_gone FIN

redisson_lock RE 1
lost_reply "$ACQ" RE acquire RE --owner "$ROWNER" --json
echo "  re-entry of a Redisson-made lock: rc $RC, sent $SENT, run $RAN times; $OUT $ERR"
check "re-entry, reply lost: sent twice, run twice" test "$SENT" = 2 -a "$RAN" = 2
expect_rc 0 "re-entry, reply lost: exits 0"
check "re-entry, reply lost: --json count 2, reentered" \
  test "$(jget "$OUT" count)" = 2 -a "$(jget "$OUT" reentered)" = true
check "re-entry, reply lost: counted once (count 2)" test "$(rcli HGET RE "$ROWNER")" = 2

rcli SET 'redisson_lock_token:{OWN}' 500 >/dev/null
lost_reply "$ACQ" OWN acquire OWN --json
echo "  acquire with its own token: rc $RC, sent $SENT, run $RAN times; $OUT $ERR"
check "own token, reply lost: sent twice, run twice" test "$SENT" = 2 -a "$RAN" = 2
expect_rc 0 "own token, reply lost: exits 0"
check "own token, reply lost: acquired, count 1, fence 501" \
  test "$(jget "$OUT" count)" = 1 -a "$(jget "$OUT" fence)" = 501 -a "$(jget "$OUT" reentered)" = false
check "own token, reply lost: the printed token holds it once" test "$(rcli HGET OWN "$(jget "$OUT" owner)")" = 1
check "own token, reply lost: one fencing token taken" test "$(rcli GET 'redisson_lock_token:{OWN}')" = 501

# one-shot: one resend only, then the error says the request may still be applied
"$RLOCK" acquire TWO --owner two >/dev/null
proxy_mode delay-down 3000
r -v -u "$PURL" --io-timeout 300ms release TWO --owner two
proxy_mode pass
SENT=$(grep -c "^rlock: [0-9:.]* > EVALSHA $REL" <<<"$ERR")
echo "  both replies lost: rc $RC, sent $SENT; $(grep -v '^rlock: [0-9:.]* [<>]' <<<"$ERR")"
expect_rc 69 "both replies lost: Redis unavailable"
check "both replies lost: sent exactly twice (one resend)" test "$SENT" = 2
check "both replies lost: the lock was released once (gone)" wait_until 5 key_gone TWO

finish
