#!/usr/bin/env bash
# Names whose helper keys would be another name's (issue 19, defect 4). Redisson
# names the helper keys of NAME "PREFIX:{NAME}", or "PREFIX:NAME" when NAME holds a
# '{' (and "{NAME}:SUFFIX" / "NAME:SUFFIX"), so 'A' and '{A}' get the same queue,
# give-up times, permits, fencing counter, once-per record and rlock_* keys: an
# operation on one changed the other. rlock refuses the name '{X}' (when 'X' is a
# name rlock accepts) and a name that has the form of a helper key, with 64 and
# the reason, before anything is sent; 'A', '{A}:x', 'x{A}' stay apart.
. "$(dirname "$0")/lib.sh"
start_redis

# What reached the server: its count of connections received (this call's own
# included). A name refused before anything is sent opens none: the next count
# is this one + 1 (its own call). Exact whatever the load, where a snapshot of
# the keys also sees a holder's renewal or a latch expiring.
conns() { rcli INFO stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }
nothing_sent() { [ "$(conns)" = $(( $1 + 1 )) ]; }
refused() { # LABEL [X]: the last command was refused: '{X}' is X's twin (X: A)
  local twin=${2:-A}
  expect_rc 64 "$1"
  check "$1: one line saying why" eval 'one_err_line && grep -qF "\"{$twin}\" and \"$twin\" the same helper keys" <<<"$ERR"'
}

# ---- --limit: a permit of '{A}' must not take A's permits away
bg "$TEST_TMP/runA" run --limit 1 --ttl 3s A -- sleep 4
check "run --limit 1 A holds its permit" wait_until 5 eval '[ "$(rcli ZCARD "{A}:timeout")" = 1 ]'
before=$(conns)
r acquire '{A}' --limit 1 --owner intruder
refused "acquire '{A}' --limit 1 beside run --limit 1 A"
check "A's permits and records are untouched: nothing was sent" nothing_sent "$before"
r acquire A --limit 1 -n --owner second
expect_rc 75 "A's one permit is still out (busy)"
check "run --limit 1 A ends 0, its permit kept all along" wait_until 10 bg_done "$TEST_TMP/runA"
check "exit 0 ($(bg_rc "$TEST_TMP/runA"): $(cat "$TEST_TMP/runA.err"))" test "$(bg_rc "$TEST_TMP/runA")" = 0

# ---- --fair: a waiter on a held '{F}' must not make a free F busy
r acquire '{F}' --owner holder
refused "acquire '{F}' (a plain lock)" F
r acquire --fair '{F}' -w 5s --owner waiter
refused "acquire --fair '{F}' -w 5s" F
check "no queue was made" test "$(rcli EXISTS 'redisson_lock_queue:{F}' 'redisson_lock_timeout:{F}' 'rlock_waiters:{F}')" = 0
r acquire F -n --owner plain
expect_rc 0 "the free F is taken"
r release F --owner plain

# ---- --once-per: '{J}' must not skip because J ran
r run --once-per 1h J -- true
expect_rc 0 "run --once-per 1h J"
r run --once-per 1h '{J}' -- sh -c 'echo ran >"$1"' sh "$TEST_TMP/j.ran"
refused "run --once-per 1h '{J}' (J ran)" J
check "it neither ran nor skipped as done" test ! -e "$TEST_TMP/j.ran"

# ---- every subcommand, every mode
before=$(conns)
for args in "acquire {A} --owner o" "acquire -s {A}" "acquire --write {A}" "acquire --limit 2 {A}" \
  "release {A} --owner o" "status {A}" "status --json {A}" "force-unlock {A}" "force-unlock --if-dead {A}" \
  "run {A} -- true" "run -w 1s B {A} -- true" "run --fair A {A} -- true"; do
  # shellcheck disable=SC2086
  r $args
  refused "$args"
done
check "nothing was written: nothing was sent" nothing_sent "$before"

# ---- names with the form of a helper key are refused too
for n in 'rlock_done:{J}' 'rlock_permits:{A}' 'rlock_waiters:{A}' 'rlock_write_intent:{A}' \
  'rlock_acquire_latch:{A}:0123' 'redisson_lock_queue:{A}' 'redisson_lock_timeout:{A}' \
  'redisson_lock_token:{A}' 'redisson_unlock_latch:{A}:0123' '{A}:timeout' 'x{A}:timeout' \
  '{A}:owner:rwlock_timeout:1'; do
  before=$(conns)
  r force-unlock "$n"
  expect_rc 64 "force-unlock '$n' (a helper key's form)"
  check "'$n': one line saying why" eval 'one_err_line && grep -q "helper key" <<<"$ERR"'
  check "'$n': nothing changed: nothing was sent" nothing_sent "$before"
done

# ---- names that stay apart are accepted, and do not touch each other
for n in A '{A}:x' 'x{A}' '{A}}' '{a{b}}' 'a{b}' '{A}x' 'rlock_done' 'timeout' '{A}:timeouts'; do
  r acquire "$n" --limit 2 --owner "o-$n" --ttl 30s
  expect_rc 0 "acquire --limit 2 '$n'"
done
check "each has its own permit key" test "$(rcli ZCARD '{A}:timeout')" = 1 -a "$(rcli ZCARD '{A}:x:timeout')" = 1 \
  -a "$(rcli ZCARD 'x{A}:timeout')" = 1 -a "$(rcli ZCARD '{a{b}}:timeout')" = 1 -a "$(rcli ZCARD 'a{b}:timeout')" = 1
for n in A '{A}:x' 'x{A}' '{A}}' '{a{b}}' 'a{b}' '{A}x' 'rlock_done' 'timeout' '{A}:timeouts'; do
  r release "$n" --limit 2 --owner "o-$n"
  expect_rc 0 "release '$n'"
done

finish
