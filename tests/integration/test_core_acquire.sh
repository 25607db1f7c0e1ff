#!/usr/bin/env bash
# acquire / re-enter / release / renew / TTL / expiry, and wrong owners leaving locks alone.
. "$(dirname "$0")/lib.sh"
start_redis


# --- acquire prints an owner token; a second owner is refused
r acquire L
expect_rc 0 "acquire a free lock"
TOK=$OUT
check "acquire prints one owner token on stdout" test -n "$TOK" -a "$(printf '%s\n' "$OUT" | wc -l)" -eq 1
check "the token is a field of the hash with count 1" test "$(rcli HGET L "$TOK")" = 1
check "the lock key is NAME itself (a hash)" test "$(rcli TYPE L)" = hash
# Issue 43: one pid per holder. The token's pid is the one the record names
# (the caller of acquire, this shell), not acquire's own, gone, process.
META_PID=$(rcli HGET L rlock:meta | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
check "the token ends in the record's pid" test "${TOK##*:}" = "$META_PID"
r status L
check "status L: the token and the record name the same pid" grep -q "held by $TOK (count 1), .*, pid $META_PID," <<<"$OUT"

r acquire L
expect_rc 75 "second acquire by another owner is busy"
check "busy error is one line 'rlock: ...'" one_err_line
check "busy error names the lock" grep -q '"L"' <<<"$ERR"
r -E 3 acquire L
expect_rc 3 "-E 3 changes the conflict exit code"
r --conflict-exit-code 9 acquire L -n
expect_rc 9 "--conflict-exit-code 9 with -n"
r acquire L --json
expect_rc 75 "busy acquire --json"
check "busy --json parses" is_json "$OUT"
check "busy --json: acquired false" test "$(jget "$OUT" acquired)" = false
check "busy --json: holder is the owner" test "$(jget "$OUT" holder)" = "$TOK"
check "no stray field from the refused owners" test "$(rcli HLEN L)" = 2

# --- re-entry with --owner and RLOCK_OWNER
r acquire L --owner "$TOK"
expect_rc 0 "re-enter with --owner"
check "re-entry prints the same token" test "$OUT" = "$TOK"
check "HGET count is 2 after --owner re-entry" test "$(rcli HGET L "$TOK")" = 2
RLOCK_OWNER=$TOK r acquire L --json
expect_rc 0 "re-enter with RLOCK_OWNER"
check "re-entry --json parses" is_json "$OUT"
check "re-entry --json: reentered true" test "$(jget "$OUT" reentered)" = true
check "re-entry --json: count 3" test "$(jget "$OUT" count)" = 3
check "re-entry --json: owner" test "$(jget "$OUT" owner)" = "$TOK"
check "HGET count is 3 after RLOCK_OWNER re-entry" test "$(rcli HGET L "$TOK")" = 3
r status L --json
expect_rc 0 "status of a held lock"
check "status --json parses" is_json "$OUT"
check "status --json count 3" test "$(jget "$OUT" locks.0.count)" = 3
check "status --json owner" test "$(jget "$OUT" locks.0.owner)" = "$TOK"

# --- release undoes one level; --all the rest
r release L --owner "$TOK"
expect_rc 0 "release one level"
check "count back to 2" test "$(rcli HGET L "$TOK")" = 2
RLOCK_OWNER=$TOK r release L --json
expect_rc 0 "release one level with RLOCK_OWNER"
check "release --json parses" is_json "$OUT"
check "release --json remaining 1" test "$(jget "$OUT" remaining)" = 1
check "count back to 1" test "$(rcli HGET L "$TOK")" = 1
r acquire L --owner "$TOK"; r acquire L --owner "$TOK"
check "count 3 again" test "$(rcli HGET L "$TOK")" = 3
r release L --owner "$TOK" --all --json
expect_rc 0 "release --all"
check "release --all --json parses" is_json "$OUT"
check "release --all --json remaining 0" test "$(jget "$OUT" remaining)" = 0
check "release --all deletes the key" test "$(rcli EXISTS L)" = 0
r release L --owner "$TOK"
expect_rc 1 "release of a free lock"
check "release of a free lock: one error line" one_err_line

# --- wrong owner: release and renew refused, lock unchanged
r acquire W --ttl 60s --owner right
expect_rc 0 "acquire W --owner right"
r acquire W --owner right --ttl 60s
before=$(rcli HGETALL W); pttl_before=$(rcli PTTL W)
r release W --owner wrong
expect_rc 1 "release with a wrong owner"
check "wrong-owner release: one error line" one_err_line
r release W --owner wrong --all
expect_rc 1 "release --all with a wrong owner"
r renew W --owner wrong --ttl 300s
expect_rc 1 "renew with a wrong owner"
check "wrong-owner renew: one error line" one_err_line
RLOCK_OWNER=wrong r renew W
expect_rc 1 "renew with a wrong RLOCK_OWNER"
check "HGETALL unchanged after wrong-owner release/renew" test "$(rcli HGETALL W)" = "$before"
pttl_after=$(rcli PTTL W)
echo "  PTTL before $pttl_before, after $pttl_after"
check "PTTL not raised by a wrong-owner renew" test "$pttl_after" -le "$pttl_before"
check "PTTL still about 60s" between "$pttl_after" 55000 60000

# --- renew sets PTTL
r renew W --owner right --ttl 100s
expect_rc 0 "renew --ttl 100s"
p=$(rcli PTTL W); echo "  PTTL after renew --ttl 100s: $p"
check "renew --ttl 100s: PTTL ~100000" between "$p" 99000 100000
r renew W --owner right --ttl 10s --json
p=$(rcli PTTL W); echo "  PTTL after renew --ttl 10s while re-entered: $p"
expect_rc 0 "renew --ttl 10s while re-entered (count 2)"
check "a re-entered lock's lease is never shortened by a renew" between "$p" 99000 100000
check "renew --json reports the lease the key has" between "$(jget "$OUT" ttl_ms)" 99000 100000
r release W --owner right
check "one level left" test "$(rcli HGET W right)" = 1
r renew W --owner right --json
p=$(rcli PTTL W); echo "  PTTL after renew without --ttl: $p"
expect_rc 0 "renew without --ttl"
check "renew --json parses" is_json "$OUT"
check "renew --json renewed true" test "$(jget "$OUT" renewed)" = true
check "renew without --ttl: back to the 60s lease it was taken with" between "$p" 59000 60000
r release W --owner right --all
expect_rc 0 "release W"
r renew W --owner right
expect_rc 1 "renew of a free lock"
check "renew never re-creates the lock" test "$(rcli EXISTS W)" = 0

# --- default TTL 30s
r acquire D
expect_rc 0 "acquire with the default ttl"
p=$(rcli PTTL D); echo "  default PTTL: $p"
check "default TTL is 30s" between "$p" 29000 30000
r acquire D2 --json
check "acquire --json parses" is_json "$OUT"
check "acquire --json ttl_ms 30000" test "$(jget "$OUT" ttl_ms)" = 30000
check "acquire --json acquired true" test "$(jget "$OUT" acquired)" = true
check "acquire --json reentered false" test "$(jget "$OUT" reentered)" = false
check "acquire --json count 1" test "$(jget "$OUT" count)" = 1
check "acquire --json name" test "$(jget "$OUT" name)" = D2
check "acquire --json owner is the hash field" test "$(rcli HGET D2 "$(jget "$OUT" owner)")" = 1

# --- a short lease expires
r acquire E --ttl 300ms
expect_rc 0 "acquire --ttl 300ms"
p=$(rcli PTTL E)
check "PTTL <= 300 (or already gone: -2)" test "$p" -le 300 -a "$p" != -1 -a "$p" != 0
gone() { [ "$(rcli EXISTS "$1")" = 0 ]; }
t0=$(now_ms)
check "the lock is gone after its 300ms lease" wait_until 2 gone E
echo "  gone after $(( $(now_ms) - t0 ))ms"
r acquire E -n
expect_rc 0 "an expired lock can be taken by another owner"

finish
