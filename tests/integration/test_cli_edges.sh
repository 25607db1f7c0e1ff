#!/usr/bin/env bash
# The small command-line defects of the hardening issue (defect 10), each as
# the contract now states it: a NAME starting with '-' for run, -w 0 tries
# once, strict durations, a run lease of at least 500ms, several hosts in one
# URL refused (several URLs are a Redlock), and an unknown command named as such.
. "$(dirname "$0")/lib.sh"
start_redis

# --- run -- NAME -- CMD: a NAME that starts with '-'
r run -- -x -- sh -c 'echo "$RLOCK_NAME"'
expect_rc 0 "run -- -x -- CMD"
check "CMD ran under the lock named '-x' ($OUT)" test "$OUT" = "-x"
r run --ttl 5s -- -x -- sh -c 'echo "$RLOCK_NAME"'
check "run --ttl 5s -- -x -- CMD: NAME is -x" test "$RC/$OUT" = "0/-x"
r run L -- sh -c 'echo "$1"' sh --
check "run L -- CMD ... --: a later '--' belongs to CMD" test "$RC/$OUT" = "0/--"
r acquire -- -y
expect_rc 0 "acquire -- -y (as before)"

# --- -w 0 tries once, as flock -w 0
r acquire W0 -w 0 --owner a
expect_rc 0 "-w 0 on a free lock takes it"
t0=$(ms)
r acquire W0 -w 0 --owner b
d=$(( $(ms) - t0 ))
expect_rc 75 "-w 0 on a held lock is busy"
check "-w 0 does not wait for the 30s lease (${d}ms < SLACK_MS)" test "$d" -lt "$SLACK_MS"
r run W0 -w 0s -- true
expect_rc 75 "run -w 0s on a held lock is busy"

# --- durations: one of each unit, largest first
for bad in 30s30s 5s1m 1m1m1m 1h2h; do
  r acquire D --ttl "$bad"
  expect_rc 64 "--ttl $bad"
  check "--ttl $bad: the message names the flag and the value" grep -qF -- "--ttl: " <<<"$ERR"
  check "--ttl $bad: ... and '$bad'" grep -qF "'$bad'" <<<"$ERR"
done
r acquire D --ttl 1h30m --owner d
expect_rc 0 "--ttl 1h30m still fine"
r release D --owner d

# --- run leases under 500ms are refused before anything happens
for short in 1ms 499ms 0.2; do
  r run SHORT --ttl "$short" -- touch "$TEST_TMP/ran-$short"
  expect_rc 64 "run --ttl $short"
  check "run --ttl $short: says it is too short for run" grep -q "too short for run" <<<"$ERR"
  check "run --ttl $short: CMD did not run" test ! -e "$TEST_TMP/ran-$short"
done
check "no lock SHORT was taken" key_gone SHORT
r run SHORT --ttl 500ms -- true
expect_rc 0 "run --ttl 500ms is accepted"
r acquire SHORTACQ --ttl 100ms
expect_rc 0 "acquire --ttl 100ms is fine (no renewal involved)"

# --- several hosts in one URL: 64, saying how to name several masters (Redlock)
r -u "redis://127.0.0.1:$REDIS_PORT,127.0.0.1:1" status
expect_rc 64 "-u redis://h1:p1,h2:p2"
check "... says to give several URLs" grep -q "give several URLs" <<<"$ERR"
check "... one line" one_err_line
RLOCK_URL="redis://127.0.0.1:$REDIS_PORT,redis://127.0.0.1:1" r status X
expect_rc 69 "RLOCK_URL with two URLs is a Redlock of 2: one down leaves no majority"

# --- an unknown command is named, not the URL before it
r -u "redis://127.0.0.1:$REDIS_PORT" frobnicate
expect_rc 64 "-u URL frobnicate"
check "the message names 'frobnicate' ($ERR)" grep -qF "unknown command 'frobnicate'" <<<"$ERR"
check "... not the URL" bash -c '! grep -qF "unknown command '"'"'redis" <<<"$1"' _ "$ERR"
r -w 5s acquire X
expect_rc 64 "a subcommand option before the subcommand"
check "... says '-w' is not a global option" grep -qF "'-w' is not a global option" <<<"$ERR"
finish
