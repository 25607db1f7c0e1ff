#!/usr/bin/env bash
# Chaos 5 - writes are applied once and only by their owner.
# (a) A lock deleted under a running holder (20 cases): the renewal finds it
#     gone, the command is stopped (76), and nothing re-creates it: MONITOR shows
#     no write to the key after the DEL, and it stays absent.
# (b) A reply that does not come within rlock's I/O timeout while it acquires
#     with -w (20 cases of CLIENT PAUSE WRITE, 20 of a reply delayed by a proxy;
#     half re-entries, half fresh acquisitions): the request is sent again with
#     the same operation id. Where the server applied both (the delayed reply),
#     the second is a no-op: the count goes up by exactly one, and a fresh
#     acquisition takes exactly one fencing token.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis
monitor_start "$TEST_TMP/mon"

deleted_case() {
  local c=$1 name=D$1 wd=$TEST_TMP/w-d$1 f=$TEST_TMP/d$1
  mkdir -p "$wd"
  BG_ENV=(WITNESS_DIR="$wd")
  bg "$f" run --ttl "$TTL" --kill-after 0.3s "$name" -- "$WITNESS" --hold 30 --tag h
  if ! wait_event START h 10 "$wd"; then record started 0 "case $c"; return; fi
  record started 1 "case $c"
  sleep_ms "$(rand_ms 50 450)"
  rcli DEL "$name" >/dev/null
  wait_until 5 bg_done "$f"
  record lost_76 "$([ "$(bg_rc "$f")" = 76 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f")"
  sleep 0.6 # longer than a renewal interval: a renewal that re-created it would show
  record stays_gone "$(key_gone "$name" && echo 1 || echo 0)" "case $c"
}
lanes 4 20 60 deleted_case
sleep 0.3
writes_after_del=$(python3 - "$TEST_TMP/mon" <<'PY'
import sys, shlex
deleted, bad = set(), []
for line in open(sys.argv[1], errors="replace"):
    if not line[:1].isdigit() or "] " not in line:
        continue
    try:
        argv = shlex.split(line.split("] ", 1)[1])
    except ValueError:
        continue
    if len(argv) < 2 or not argv[1].startswith("D"):
        continue
    cmd = argv[0].upper()
    if cmd == "DEL" and '[0 lua]' not in line:
        deleted.add(argv[1])
    elif argv[1] in deleted and cmd in ("HSET", "HINCRBY", "PEXPIRE", "SET", "HSETNX"):
        bad.append(" ".join(argv[:2]))
print(len(bad), ";".join(bad[:3]))
PY
)
verdict started "the holder's command started"
verdict lost_76 "a deleted lock is noticed and the run exits 76"
verdict stays_gone "the lock stays gone after the next renewal time"
check "MONITOR: no write re-created a deleted lock (got ${writes_after_del})" test "${writes_after_del%% *}" = 0

# retry_case CASE FAULT: FAULT is "pause" (CLIENT PAUSE WRITE 700ms: the server
# holds the request and drops it when rlock gives up on it) or "late" (the reply
# is delayed past the I/O timeout: the server applied the first request, and
# the retry finds it done).
retry_case() {
  local c=$1 fault=$2 name=CP$1 owner=owner-$1 before_count=0 before_fence
  rcli SET "redisson_lock_token:{$name}" 100 >/dev/null # an existing counter: count on it
  if [ $((c % 2)) = 0 ]; then
    r acquire "$name" --owner "$owner" --ttl 30s
    before_count=1
  fi
  before_fence=$(rcli GET "redisson_lock_token:{$name}"); before_fence=${before_fence:-0}
  local url=$RLOCK_URL healer=
  if [ "$fault" = pause ]; then
    rcli CLIENT PAUSE 700 WRITE >/dev/null
  else
    # Healed once the server has the request (MONITOR shows it), so that its
    # reply is the one held past the I/O timeout however late rlock started
    # (a fixed 0.15 s healed the proxy before a slow start on a loaded machine
    # sent anything: no timeout, no resend)
    url=$PROXY_URL
    local seen
    seen=$(grep -c "\"EVALSHA\" \"[0-9a-f]*\" \"[0-9]*\" \"$name\"" "$TEST_TMP/mon")
    proxy_mode delay-down 400
    (wait_until 10 eval "[ \$(grep -c '\"EVALSHA\" \"[0-9a-f]*\" \"[0-9]*\" \"$name\"' '$TEST_TMP/mon') -gt $seen ]"
     sleep 0.05; proxy_mode pass) &
    healer=$!
  fi
  r -v -u "$url" --io-timeout 200ms acquire -w 10s --owner "$owner" --ttl 30s "$name"
  [ -n "$healer" ] && wait "$healer"
  local rc=$RC retried
  retried=$(grep -c '^rlock: [0-9:.]* > EVALSHA' "$TEST_TMP/err")
  local count; count=$(rcli HGET "$name" "$owner")
  local fence; fence=$(rcli GET "redisson_lock_token:{$name}")
  record "rc_$fault" "$([ "$rc" = 0 ] && echo 1 || echo 0)" "case $c: rc $rc $(grep -v '^rlock: [0-9:.]* [<>]' "$TEST_TMP/err" | head -c 300)"
  record "retried_$fault" "$([ "$retried" -ge 2 ] && echo 1 || echo 0)" "case $c: $retried requests"
  record "once_$fault" "$([ "$count" = $((before_count + 1)) ] && echo 1 || echo 0)" "case $c: count $before_count -> $count"
  local want=$(( before_fence + (before_count == 0 ? 1 : 0) ))
  record "fence_$fault" "$([ "$fence" = "$want" ] && echo 1 || echo 0)" "case $c: fence $before_fence -> $fence"
  rcli DEL "$name" >/dev/null
}
proxy_start
for c in $(seq 1 20); do retry_case "$c" pause; done
for c in $(seq 21 40); do retry_case "$c" late; done
for fault in pause late; do
  verdict "rc_$fault" "$fault: acquire -w across a reply timeout succeeds"
  verdict "retried_$fault" "$fault: the request timed out and was sent again"
  verdict "once_$fault" "$fault: the re-entry count went up by exactly one"
  verdict "fence_$fault" "$fault: a fresh acquisition took one fencing token, a re-entry none"
done
applied=$(grep -c '"EVALSHA" "[0-9a-f]*" "[0-9]*" "CP\(2[1-9]\|3[0-9]\|40\)"' "$TEST_TMP/mon")
check "late: the server really applied both requests ($applied acquire EVALSHAs for 20 cases and 10 setup acquisitions)" test "$applied" -ge 50
monitor_stop
hygiene_checks no-double
finish
