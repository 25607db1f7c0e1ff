#!/usr/bin/env bash
# Issue 44, the Lua side: every script against a lock whose key and companion
# keys hold random types and values (scripts_random.py). No script errors out
# of its documented answers, and a stranger's request leaves the lock's key as
# it was. Bounded: RANDOM_CASES cases (default 150) of one seed each run
# (RANDOM_SEED, default: new each run, printed, so a finding can be replayed).
. "$(dirname "$0")/lib.sh"
start_redis
seed=${RANDOM_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed $seed (RANDOM_SEED=$seed replays it)"
out=$("$PY" "$(dirname "$0")/scripts_random.py" "$RLOCK" "$REDIS_PORT" "${RANDOM_CASES:-150}" "$seed")
status=$?
printf '%s\n' "$out"
check "no script answered outside its documented answers, no stranger changed a lock (seed $seed)" test "$status" = 0
finish
