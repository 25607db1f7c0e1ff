#!/usr/bin/env bash
# Issue 42: when a lock frees, a live waiter gets it whoever freed it. A matrix of
# holder mode x waiter mode x way of freeing (rlock's release and force-unlock,
# Redisson's forceUnlock and unlock scripts as Redisson sends them, a user without
# the ~rlock_turns: pattern, the two waiters ahead stopped), each with a 20s lease:
# the waiter's CMD must start before the old lease end (the promise; a waiter that
# sleeps until the lease end it saw fails it), and within 1s + SLACK_MS of the free
# (the figure is printed). A plain waiter behind a --limit semaphore's key (which no
# release ends) is told so at once.
. "$(dirname "$0")/lib.sh"
start_redis
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PW=wake-Pw-42
H="127.0.0.1:$REDIS_PORT"
. "$(dirname "$0")/acl_helpers.sh"
# A user of the guide's line made before the turns (no ~rlock_turns:): its
# releases publish '0' on the release channel only.
acl_setuser noturns 's/ ~rlock_turns:{lock:\*//' >/dev/null
NT="redis://noturns:$PW@$H"
# A user with the plain lock's channels only (no &redisson_rwlock:, &redisson_sc:):
# its waiter listens on those alone.
acl_setuser plainch 's/ &redisson_rwlock:{lock:\*//; s/ &redisson_sc:{lock:\*//' >/dev/null
PC="redis://plainch:$PW@$H"
LEASE=20s

# Redisson's RLock scripts, as Redisson 3.x/4.x sends them (EVAL, LongCodec):
# forceUnlock: KEYS = name, channel; ARGV = 0 (LockPubSub's unlock message)
R_FORCE_UNLOCK="if (redis.call('del', KEYS[1]) == 1) then redis.call('publish', KEYS[2], ARGV[1]); return 1 else return 0 end"
# unlock: KEYS = name, channel; ARGV = 0, the lease (ms), the owner (UUID:threadId)
R_UNLOCK="if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;"
ROWNER=6f1c2b7e-3d1a-4e8f-9a55-0c2d4e6f8a10:57

mode_flags() { case $1 in plain) ;; fair) echo --fair ;; read) echo -s ;; write) echo --write ;; limit2) echo --limit 2 ;; esac; }
# waiting NAME MODE: a waiter of MODE for NAME has subscribed (its own channel for
# a plain waiter queued for its turn, else its mode's channel)
waiting() {
  case $2 in
    plain | fair) [ -n "$(rcli PUBSUB CHANNELS "redisson_lock__channel:{$1}:*")" ] || has_chan_sub "redisson_lock__channel:{$1}" ;;
    read | write) has_chan_sub "redisson_rwlock:{$1}" ;;
    limit2) has_chan_sub "redisson_sc:{$1}" ;;
  esac
}
# waiter F NAME MODE: `run NAME -w 60s` whose CMD writes when it started (wall ms) to
# F.start (WAITER_ARGS: global options before it)
WAITER_ARGS=()
waiter() {
  local f=$1 name=$2 mode=$3
  # shellcheck disable=SC2046
  bg "$f" "${WAITER_ARGS[@]}" run "$name" -w 60s $(mode_flags "$mode") -- sh -c 'date +%s%3N >"$0.start"' "$f"
}

# freed_check LABEL F T_FREE LEFT: F's CMD started before the old lease end
# (T_FREE + LEFT) and within 1s + SLACK_MS of T_FREE.
FIGURES=()
freed_check() {
  local label=$1 f=$2 t_free=$3 left=$4 start d
  wait_until $(( left / 1000 + 10 )) has_file "$f.start"
  start=$(cat "$f.start" 2>/dev/null || echo $(( t_free + 999999 )))
  d=$(( start - t_free ))
  FIGURES+=("$label: ${d}ms")
  check "$label: the waiter's CMD started before the old lease end (${d}ms after the free; ${left}ms of lease were left)" \
    test "$start" -lt $(( t_free + left ))
  check "$label: within 1s + SLACK_MS of the free (${d}ms)" test "$d" -lt $(( 1000 + SLACK_MS ))
  check "$label: the waiter exited 0" wait_until 10 eval "bg_done '$f' && [ \"\$(bg_rc '$f')\" = 0 ]"
}

# one LABEL NAME HOLDER_MODE WAITER_MODE HOW [OWNER]: the holder takes NAME for
# $LEASE, a waiter of WAITER_MODE waits, then HOW frees it.
n=0
one() {
  local label=$1 name=$2 hmode=$3 wmode=$4 how=$5 owner=${6:-holder} f left t_free
  n=$((n + 1)); f="$TEST_TMP/w$n"
  # shellcheck disable=SC2046
  r acquire "$name" --ttl "$LEASE" --owner "$owner" $(mode_flags "$hmode")
  expect_rc 0 "$label: the holder takes $name"
  waiter "$f" "$name" "$wmode"
  check "$label: the waiter waits" wait_until 10 waiting "$name" "$wmode"
  sleep 0.3 # its attempt after subscribing
  check "$label: ... still" test ! -e "$f.start"
  left=$(rcli PTTL "$name")
  t_free=$(ms)
  # shellcheck disable=SC2046
  case $how in
    release) r release "$name" --owner "$owner" $(mode_flags "$hmode") ;;
    force-unlock) r force-unlock "$name" ;;
    redisson-force-unlock) OUT=$(rcli EVAL "$R_FORCE_UNLOCK" 2 "$name" "redisson_lock__channel:{$name}" 0) RC=$? ;;
    redisson-unlock) OUT=$(rcli EVAL "$R_UNLOCK" 2 "$name" "redisson_lock__channel:{$name}" 0 30000 "$owner") RC=$? ;;
    noturns-release) r -u "$NT" release "$name" --owner "$owner" ;;
    noturns-force-unlock) r -u "$NT" force-unlock "$name" ;;
    lease-end) left=$(rcli PTTL "$name"); t_free=$(( $(ms) + left )); RC=0 ;; # nobody frees it
  esac
  # (the waiter may hold it again by the time this is read: no look at the key)
  check "$label: $how freed $name (rc $RC, $OUT)" eval '[ "$RC" = 0 ] && case $how in redisson-*) [ "$OUT" = 1 ] ;; esac'
  freed_check "$label" "$f" "$t_free" "$left"
}

# ---- who frees a plain lock that plain waiters wait for their turn at
one "rlock release" lock:a plain plain release
one "rlock force-unlock" lock:b plain plain force-unlock
one "Redisson's forceUnlock" lock:c plain plain redisson-force-unlock
one "Redisson's unlock (a hold rlock took with Redisson's token)" lock:d plain plain redisson-unlock "$ROWNER"
one "release by a user without ~rlock_turns:" lock:e plain plain noturns-release
one "force-unlock by a user without ~rlock_turns:" lock:f plain plain noturns-force-unlock
one "Redisson's forceUnlock, a --fair waiter" lock:l plain fair redisson-force-unlock
LEASE=3s one "the lease's end (3s)" lock:n plain plain lease-end
WAITER_ARGS=(-u "$PC")
one "Redisson's forceUnlock, a waiter allowed the plain lock's channels only" lock:k plain plain redisson-force-unlock
WAITER_ARGS=()

# ---- across modes: the holder's release is announced on its layout's channel
one "plain holder, -s waiter" lock:g plain read release
one "-s holder, plain waiter" lock:h read plain release
one "--write holder, plain waiter" lock:i write plain release
one "plain holder, --limit 2 waiter" lock:j plain limit2 release
# ---- a --fair holder (RFairLock's hold is a plain hash; its release names the fair
# queue's head, or the plain waiters' turn when no fair waiter is queued)
one "--fair holder, plain waiter" lock:f1 fair plain release
one "--fair holder, plain waiter, Redisson's forceUnlock" lock:f2 fair plain redisson-force-unlock
one "--fair holder, --fair waiter" lock:f3 fair fair release
one "--fair holder, -s waiter" lock:f4 fair read release

# ---- Redlock (three masters): the holder's release, Redisson's forceUnlock sent to
# every master (RedissonRedLock's), the lease's end
. "$(dirname "$0")/topology.sh"
start_masters 3
RL=(-u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)")
redlock_one() {
  local label=$1 name=$2 how=$3 lease=${4:-$LEASE} f left t_free i
  n=$((n + 1)); f="$TEST_TMP/w$n"
  r "${RL[@]}" acquire "$name" --ttl "$lease" --owner holder
  expect_rc 0 "$label: the holder takes $name on the three masters"
  bg "$f" "${RL[@]}" run "$name" -w 60s -- sh -c 'date +%s%3N >"$0.start"' "$f"
  check "$label: the waiter waits (subscribed on every master)" \
    wait_until 10 eval "for i in 0 1 2; do [ \"\$(mcli \$i PUBSUB NUMSUB 'redisson_lock__channel:{$name}' | sed -n 2p)\" = 1 ] || exit 1; done"
  sleep 0.3
  check "$label: ... still" test ! -e "$f.start"
  left=$(mcli 0 PTTL "$name")
  t_free=$(ms)
  case $how in
    release) r "${RL[@]}" release "$name" --owner holder ;;
    redisson-force-unlock)
      RC=0
      for i in 0 1 2; do
        OUT=$(mcli "$i" EVAL "$R_FORCE_UNLOCK" 2 "$name" "redisson_lock__channel:{$name}" 0) || RC=1
        [ "$OUT" = 1 ] || RC=1
      done ;;
    lease-end) left=$(mcli 0 PTTL "$name"); t_free=$(( $(ms) + left )); RC=0 ;;
  esac
  check "$label: $how freed $name (rc $RC)" test "$RC" = 0
  freed_check "$label" "$f" "$t_free" "$left"
}
redlock_one "Redlock: rlock release" lock:r1 release
redlock_one "Redlock: Redisson's forceUnlock on every master" lock:r2 redisson-force-unlock
redlock_one "Redlock: the lease's end (3s)" lock:r3 lease-end 3s

# ---- the two waiters whose turn comes first are stopped (SIGSTOP): the third,
# live, gets the lock once their turn's deadline passed, not at the lease end
r acquire lock:s --ttl "$LEASE" --owner holder
expect_rc 0 "stopped: the holder takes lock:s"
for i in 1 2; do
  bg "$TEST_TMP/s$i" run lock:s -w 60s -- true
  check "stopped: waiter $i queued" wait_until 10 eval "[ \"\$(rcli ZCARD 'rlock_turns:{lock:s}')\" = $i ]"
  wait_until 10 eval "[ \"\$(rcli PUBSUB CHANNELS 'redisson_lock__channel:{lock:s}:*' | grep -vc ':rlock:turns$')\" = $i ]"
  sleep 0.1
done
waiter "$TEST_TMP/s3" lock:s plain
check "stopped: the third is queued" wait_until 10 eval "[ \"\$(rcli ZCARD 'rlock_turns:{lock:s}')\" = 3 ]"
wait_until 10 eval "[ \"\$(rcli PUBSUB CHANNELS 'redisson_lock__channel:{lock:s}:*' | grep -vc ':rlock:turns$')\" = 3 ]"
sleep 0.3
check "stopped: the third's turn comes last" test "$(rcli ZRANGE 'rlock_turns:{lock:s}' 2 2)" != ""
kill -STOP "$(cat "$TEST_TMP/s1.pid")" "$(cat "$TEST_TMP/s2.pid")"
left=$(rcli PTTL lock:s)
t_free=$(ms)
r release lock:s --owner holder
expect_rc 0 "stopped: the holder releases"
freed_check "two stopped waiters ahead" "$TEST_TMP/s3" "$t_free" "$left"
kill -CONT "$(cat "$TEST_TMP/s1.pid")" "$(cat "$TEST_TMP/s2.pid")"
check "stopped: once continued, both get it and exit 0" \
  wait_until 20 eval "bg_done '$TEST_TMP/s1' && bg_done '$TEST_TMP/s2' && [ \"\$(bg_rc '$TEST_TMP/s1')\$(bg_rc '$TEST_TMP/s2')\" = 00 ]"

# ---- more waiters than the head of the queue (the first four listen on the
# release channel, the others on their own only): Redisson frees the lock again
# and again, each time under a waiter that took it on the last free (its CMD
# holds on, so no rlock release moves the queue): each free reaches a live
# waiter within 1s, also the fifth and sixth, told they are at the head by the
# waiter that took the lock before them
many_starts() { find "$TEST_TMP" -maxdepth 1 -name 'q*.start' | wc -l; }
r acquire lock:q --ttl "$LEASE" --owner holder
expect_rc 0 "head: the holder takes lock:q"
for i in 1 2 3 4 5 6; do
  bg "$TEST_TMP/q$i" run lock:q -w 60s -- sh -c 'date +%s%3N >"$0.start"; sleep 60' "$TEST_TMP/q$i"
  check "head: waiter $i queued" wait_until 10 eval "[ \"\$(rcli ZCARD 'rlock_turns:{lock:q}')\" = $i ]"
  wait_until 10 eval "[ \"\$(rcli PUBSUB CHANNELS 'redisson_lock__channel:{lock:q}:*' | grep -vc ':rlock:turns$')\" = $i ]"
  sleep 0.1
done
sleep 0.3
check "head: four of the six listen on the release channel" \
  test "$(rcli PUBSUB NUMSUB 'redisson_lock__channel:{lock:q}' | sed -n 2p)" = 4
for round in 1 2 3 4 5 6; do
  before=$(many_starts)
  left=$(rcli PTTL lock:q)
  t_free=$(ms)
  OUT=$(rcli EVAL "$R_FORCE_UNLOCK" 2 lock:q 'redisson_lock__channel:{lock:q}' 0)
  check "head: Redisson's forceUnlock $round freed lock:q ($OUT)" test "$OUT" = 1
  wait_until $(( left / 1000 + 10 )) eval "[ \$(many_starts) -gt $before ]"
  start=$(find "$TEST_TMP" -maxdepth 1 -name 'q*.start' -exec cat {} + | sort -n | tail -1)
  d=$(( ${start:-$(( t_free + 999999 ))} - t_free ))
  FIGURES+=("forceUnlock $round of 6 under queued waiters: ${d}ms")
  check "head: free $round reached a live waiter before the old lease end (${d}ms; ${left}ms were left)" \
    test "$d" -lt "$left"
  check "head: free $round: within 1s + SLACK_MS (${d}ms)" test "$d" -lt $(( 1000 + SLACK_MS ))
done
check "head: nobody left queued" test "$(rcli ZCARD 'rlock_turns:{lock:q}')" = 0
for i in 1 2 3 4 5 6; do
  kill "$(cat "$TEST_TMP/q$i.pid")" 2>/dev/null
done

# ---- waiters ahead stopped (SIGSTOP: still subscribed) or killed, more than
# the head's four in all: a release reaches the live waiter behind them (behind
# the head when it queued) within 1s. ahead LABEL NAME STOPPED KILLED
ahead() {
  local label=$1 name=$2 stopped=$3 killed=$4 i last left t_free
  last=$(( stopped + killed + 1 ))
  r acquire "$name" --ttl "$LEASE" --owner holder
  expect_rc 0 "$label: the holder takes $name"
  for i in $(seq 1 "$last"); do
    if [ "$i" = "$last" ]; then
      waiter "$TEST_TMP/$name-$i" "$name" plain
    else
      bg "$TEST_TMP/$name-$i" run "$name" -w 60s -- true
    fi
    check "$label: waiter $i queued" wait_until 10 eval "[ \"\$(rcli ZCARD 'rlock_turns:{$name}')\" = $i ]"
    wait_until 10 eval "[ \"\$(rcli PUBSUB CHANNELS 'redisson_lock__channel:{$name}:*' | grep -vc ':rlock:turns$')\" = $i ]"
    sleep 0.1
  done
  sleep 0.3
  check "$label: the last is behind the head (four listen on the release channel)" \
    test "$(rcli PUBSUB NUMSUB "redisson_lock__channel:{$name}" | sed -n 2p)" = 4
  for i in $(seq 1 "$stopped"); do kill -STOP "$(cat "$TEST_TMP/$name-$i.pid")"; done
  for i in $(seq $(( stopped + 1 )) $(( last - 1 ))); do kill -KILL "$(cat "$TEST_TMP/$name-$i.pid")"; done
  wait_until 10 eval "[ \"\$(rcli PUBSUB CHANNELS 'redisson_lock__channel:{$name}:*' | grep -vc ':rlock:turns$')\" = $(( stopped + 1 )) ]"
  left=$(rcli PTTL "$name")
  t_free=$(ms)
  r release "$name" --owner holder
  expect_rc 0 "$label: the holder releases"
  freed_check "$label" "$TEST_TMP/$name-$last" "$t_free" "$left"
  for i in $(seq 1 "$stopped"); do kill -CONT "$(cat "$TEST_TMP/$name-$i.pid")"; done
  for i in $(seq 1 "$stopped"); do
    check "$label: stopped waiter $i, once continued, gets it and exits 0" \
      wait_until 20 eval "bg_done '$TEST_TMP/$name-$i' && [ \"\$(bg_rc '$TEST_TMP/$name-$i')\" = 0 ]"
  done
}
ahead "two stopped and two killed waiters ahead of the fifth" lock:k6 2 2
ahead "four stopped waiters ahead of the fifth" lock:k7 4 0

# ---- a plain waiter behind a --limit semaphore's key (no lease: no release and no
# lease end ends it): said at once, not after its whole -w
r acquire lock:m --limit 2 --owner p
r release lock:m --limit 2 --owner p
check "the semaphore's key stays (no expiry)" test "$(rcli PTTL lock:m)" = -1
t0=$(ms)
r acquire lock:m -w 20s
d=$(( $(ms) - t0 ))
expect_rc 75 "a plain acquire -w 20s of a semaphore's name: busy"
check "said at once, not after the 20s wait (${d}ms < 1000ms + SLACK_MS)" test "$d" -lt $(( 1000 + SLACK_MS ))
check "one line saying waiting cannot end it, and to take a permit with --limit N: $ERR" \
  eval 'one_err_line && grep -q "waiting cannot end it" <<<"$ERR" && grep -q -- "--limit N" <<<"$ERR"'

echo "  freed -> the waiter's CMD started:"
printf '    %s\n' "${FIGURES[@]}"
finish
