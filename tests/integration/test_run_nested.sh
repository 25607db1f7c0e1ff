#!/usr/bin/env bash
# run inside run on the same lock re-enters through RLOCK_OWNER (count 2, same
# fence), does not deadlock, and the lock is free after both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

N=$TEST_TMP/n
t0=$(ms)
timeout 20 "$RLOCK" run L -- sh -c '
  echo "$RLOCK_OWNER" >$1.outer.owner; echo "$RLOCK_FENCE" >$1.outer.fence
  "$2" run L -- sh -c "
    echo \"\$RLOCK_OWNER\" >$1.inner.owner; echo \"\$RLOCK_FENCE\" >$1.inner.fence
    \"$2\" status L --json >$1.inner.json
    redis-cli -h 127.0.0.1 -p $3 HGET L \"\$RLOCK_OWNER\" >$1.inner.count
    exit 6"
  echo $? >$1.inner.rc
  redis-cli -h 127.0.0.1 -p $3 HGET L "$RLOCK_OWNER" >$1.after.count
  "$2" run -n L -- true; echo $? >$1.again.rc
  exit 0' sh "$N" "$RLOCK" "$REDIS_PORT" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
RC=$?; ERR=$(cat "$TEST_TMP/err"); OUT=$(cat "$TEST_TMP/out")
d=$(( $(ms) - t0 )); echo "  nested runs took ${d}ms"
expect_rc 0 "nested rlock run L -- rlock run L -- ... finishes (no deadlock)"
check "nested run finished quickly (${d}ms < 5000ms)" test "$d" -lt 5000
check "the inner run re-entered with the outer owner token" test -s "$N.inner.owner" -a "$(cat "$N.inner.owner" 2>/dev/null)" = "$(cat "$N.outer.owner" 2>/dev/null)"
count=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["locks"][0]["count"])' <"$N.inner.json" 2>/dev/null)
check "the inner child sees count 2 in status --json (got '$count')" test "$count" = 2
check "the hash field holds 2 inside the inner run" test "$(cat "$N.inner.count" 2>/dev/null)" = 2
check "a re-entry keeps the fence (inner $(cat "$N.inner.fence" 2>/dev/null), outer $(cat "$N.outer.fence" 2>/dev/null))" \
  test -s "$N.inner.fence" -a "$(cat "$N.inner.fence" 2>/dev/null)" = "$(cat "$N.outer.fence" 2>/dev/null)"
check "the inner run passes its child's status (6, got $(cat "$N.inner.rc" 2>/dev/null))" test "$(cat "$N.inner.rc" 2>/dev/null)" = 6
check "after the inner run the outer still holds one level" test "$(cat "$N.after.count" 2>/dev/null)" = 1
check "a re-entering run -n inside the outer run is not busy (rc $(cat "$N.again.rc" 2>/dev/null))" test "$(cat "$N.again.rc" 2>/dev/null)" = 0
check "after both runs L is free (EXISTS L = 0)" key_gone L

# a run with a different owner inside does not re-enter: busy with -n
timeout 20 "$RLOCK" run L -- sh -c 'RLOCK_OWNER=someone-else "$1" run -n L -- true; echo $? >"$2"' sh "$RLOCK" "$N.other.rc" 2>/dev/null
check "a different owner inside gets 75 (got $(cat "$N.other.rc" 2>/dev/null))" test "$(cat "$N.other.rc" 2>/dev/null)" = 75
check "L is free afterwards" key_gone L

# an inner run with a shorter --ttl must not shorten the outer run's lease: the
# outer child still runs under the lock after the inner one ended
timeout 20 "$RLOCK" run L --ttl 30s -- sh -c '
  "$1" run L --ttl 1500ms -- sleep 1.2
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    redis-cli -h 127.0.0.1 -p "$2" PTTL L; sleep 0.2
  done' sh "$RLOCK" "$REDIS_PORT" >"$N.short" 2>"$TEST_TMP/err"
RC=$?
expect_rc 0 "outer run --ttl 30s with an inner run --ttl 1500ms"
bad=$(awk '$1 <= 0' "$N.short" | head -3 | tr '\n' ' ')
check "the outer's lock never disappears after the shorter inner run (PTTLs: $(tr '\n' ' ' <"$N.short"))" \
  test "$(wc -l <"$N.short")" -ge 15 -a -z "$bad"
check "L is free afterwards" key_gone L

finish
