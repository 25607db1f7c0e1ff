#!/usr/bin/env bash
# A key of another type (SET NX PX lock of redis-py/node-redlock) is held by a foreign
# owner: never overwritten or deleted except by force-unlock.
. "$(dirname "$0")/lib.sh"
start_redis

untouched() { [ "$(rcli TYPE "$1")" = string ] && [ "$(rcli GET "$1")" = x ] && [ "$(rcli PTTL "$1")" -gt 50000 ] && [ "$(rcli PTTL "$1")" -le 60000 ]; }

rcli SET FK x PX 60000 >/dev/null
r acquire FK
expect_rc 75 "acquire of a string key is busy"
check "busy error is one line" one_err_line
check "the string is untouched after acquire" untouched FK
r acquire FK -w 500ms
expect_rc 75 "acquire -w 500ms of a string key runs out"
check "the string is untouched after acquire -w" untouched FK
r acquire FK --json
expect_rc 75 "acquire --json of a string key"
check "busy --json parses" is_json "$OUT"
check "busy --json type string" test "$(jget "$OUT" type)" = string
r release FK --owner someone
expect_rc 1 "release of a string key"
check "release error is one line" one_err_line
check "the string is untouched after release" untouched FK
r release FK --owner someone --all
expect_rc 1 "release --all of a string key"
check "the string is untouched after release --all" untouched FK
r renew FK --owner someone --ttl 5m
expect_rc 1 "renew of a string key"
check "the string is untouched after renew" untouched FK
check "no fencing counter was taken" test "$(rcli EXISTS 'redisson_lock_token:{FK}')" = 0

r status FK
expect_rc 0 "status of a string key: held"
r status FK --json
expect_rc 0 "status --json of a string key"
check "status --json parses" is_json "$OUT"
check "status --json held true" test "$(jget "$OUT" locks.0.held)" = true
check "status --json foreign true" test "$(jget "$OUT" locks.0.foreign)" = true
check "status --json type string" test "$(jget "$OUT" locks.0.type)" = string
check "status --json ttl_ms ~60000" python3 -c 'import json,sys; t=json.loads(sys.argv[1])["locks"][0]["ttl_ms"]; assert 50000 < t <= 60000, t' "$OUT"

# other foreign types
rcli RPUSH FL a >/dev/null
r acquire FL
expect_rc 75 "acquire of a list key is busy"
check "the list is untouched" test "$(rcli LRANGE FL 0 -1)" = a
r status FL --json
check "list: foreign, ttl_ms -1 (no expiry)" python3 -c 'import json,sys; l=json.loads(sys.argv[1])["locks"][0]; assert l["foreign"] is True and l["type"]=="list" and l["ttl_ms"]==-1, l' "$OUT"

# a hash that is not a lock (no integer values) is never counted as ours to take
rcli HSET FH name bob >/dev/null
r acquire FH
expect_rc 75 "acquire of an unrelated hash key is busy (never overwritten)"
check "the unrelated hash is untouched" test "$(rcli HGETALL FH | tr '\n' ' ')" = "name bob "

# force-unlock removes it; then nothing to remove
r force-unlock FK
expect_rc 0 "force-unlock of a string key"
check "force-unlock deleted the string" test "$(rcli EXISTS FK)" = 0
r force-unlock FK
expect_rc 1 "force-unlock again: nothing to remove"
r force-unlock FL --json
expect_rc 0 "force-unlock --json of a list key"
check "force-unlock --json parses" is_json "$OUT"
check "force-unlock --json removed true" test "$(jget "$OUT" removed)" = true
r force-unlock FL --json
expect_rc 1 "force-unlock --json of a free name"
check "force-unlock --json (nothing) parses" is_json "$OUT"
r acquire FK
expect_rc 0 "acquire works after force-unlock"

finish
