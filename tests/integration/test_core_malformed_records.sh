#!/usr/bin/env bash
# A malformed, forged or absent rlock:meta never breaks a command: status (named, listed,
# --json), acquire (busy message and --json), release, renew and force-unlock all work,
# showing "holder unknown" or the part of the record that can be read. Nothing in the
# record is believed: renew clamps its ttl_ms, a re-entry reports the fencing counter.
. "$(dirname "$0")/lib.sh"
start_redis

records=(
  '{"host":null}' '{"pid":"x"}' '{"command":123}' 'not json' '[1,2,3]' 'null' '42' '"text"' ''
  '{"pid":1e999}' '{"acquired_at_ms":1e300}' '{"acquired_at_ms":-5}' '{"ttl_ms":"abc"}'
  '{"fence":"x"}' '{"host":{"a":1},"pid":[1]}' $'{"host":"\xff\xfe"}' '{"pid":99999999999999999999999}'
  '{"host":"h\u0000\n\u001b[31m","pid":-1,"command":"x"}' "{\"command\":\"$(printf 'c%.0s' $(seq 1 3000))\"}"
  '{"host":"partial-host","pid":"nan"}'
)
# no_crash: the command ended by itself with an exit code of the contract (not
# 70, the internal-error code, nor killed by a signal), with one stderr line at
# most, never the internal-error form or a JSON library's text. An empty stderr
# passes only with such an exit code.
no_crash() {
  case $RC in 0 | 1 | 64 | 69 | 75 | 76 | 77) ;; *) return 1 ;; esac
  [ "$(grep -c '' <<<"$ERR")" -le 1 ] || [ -z "$ERR" ] || return 1
  ! grep -qi 'internal error\|type_error\|type must be\|\[json' <<<"$ERR"
}
i=0
for meta in "${records[@]}"; do
  i=$((i + 1)); M="M$i"; label="record $i ($(printf '%q' "${meta:0:40}"))"
  rcli DEL "$M" >/dev/null
  rcli HSET "$M" tok 1 >/dev/null
  printf '%s' "$meta" | rcli -x HSET "$M" rlock:meta >/dev/null
  rcli PEXPIRE "$M" 60000 >/dev/null

  r status "$M"
  expect_rc 0 "$label: status NAME"
  check "$label: status shows the owner" bash -c 'grep -q "held by tok (count 1)" <<<"$1"' _ "$OUT"
  check "$label: status, no crash" no_crash
  r status "$M" --json
  expect_rc 0 "$label: status --json"
  check "$label: status --json parses, holder is an object" python3 -c '
import json,sys; l=json.loads(sys.argv[1])["locks"][0]
assert l["owner"]=="tok" and l["count"]==1 and isinstance(l["holder"], dict), l' "$OUT"
  r acquire "$M"
  expect_rc 75 "$label: acquire by another owner is busy"
  check "$label: busy is one line naming the owner" bash -c '[[ $1 == *"held by tok"* ]] && [ "$(wc -l <<<"$1")" = 1 ]' _ "$ERR"
  check "$label: acquire, no crash" no_crash
  r acquire "$M" --json
  expect_rc 75 "$label: busy acquire --json"
  check "$label: busy --json parses" is_json "$OUT"
  r renew "$M" --owner tok
  expect_rc 0 "$label: renew by the owner (no --ttl)"
  p=$(rcli PTTL "$M")
  check "$label: renew without --ttl: an unreadable ttl_ms gives 30s ($p)" between "$p" 25000 30000
  r acquire "$M" --owner tok --json
  expect_rc 0 "$label: re-entry by the owner"
  r release "$M" --owner tok
  expect_rc 0 "$label: release one level"
  r release "$M" --owner tok
  expect_rc 0 "$label: release the last level"
  check "$label: released" key_gone "$M"
  rcli HSET "$M" tok 1 >/dev/null
  printf '%s' "$meta" | rcli -x HSET "$M" rlock:meta >/dev/null
  r force-unlock "$M" --json
  expect_rc 0 "$label: force-unlock --json"
  check "$label: force-unlock --json parses" is_json "$OUT"
  check "$label: force-unlock removed it" key_gone "$M"
  check "$label: force-unlock, no crash" no_crash
done

# the listing goes through every malformed record without stopping half-way
for i in $(seq 1 ${#records[@]}); do
  rcli HSET "S$i" tok 1 >/dev/null
  printf '%s' "${records[$((i - 1))]}" | rcli -x HSET "S$i" rlock:meta >/dev/null
done
r status --match 'S*'
expect_rc 0 "status --match S* over every malformed record"
check "status lists all ${#records[@]} of them" test "$(grep -cE '^S[0-9]+ +(rlock|redisson) ' <<<"$OUT")" = "${#records[@]}"
r status --match 'S*' --json
expect_rc 0 "status --json over every malformed record"
check "status --json lists all of them" python3 -c '
import json,sys; assert len(json.loads(sys.argv[1])["locks"]) == int(sys.argv[2])' "$OUT" "${#records[@]}"

# partial information is shown; the unreadable rest is null, and the text says so
rcli HSET P tok 1 rlock:meta '{"host":"h1","pid":"x","command":123,"fence":7}' >/dev/null
r status P --json
check "partial record: host shown, pid/command null, fence kept" python3 -c '
import json,sys; l=json.loads(sys.argv[1])["locks"][0]; h=l["holder"]
assert h["host"]=="h1" and h["pid"] is None and h["command"] is None and l["fence"]==7, l' "$OUT"
r acquire P
check "partial record: busy message shows the host" grep -q 'held by tok on h1,' <<<"$ERR"
rcli HSET U tok 1 rlock:meta 'garbage' >/dev/null
r status U
check "unreadable record: status says holder unknown" grep -q 'holder unknown' <<<"$OUT"
r acquire U
check "unreadable record: busy says holder unknown" grep -q 'holder unknown' <<<"$ERR"

# renew without --ttl: the record's ttl_ms is clamped, never believed as it is
for t in '-5:30000' '0:30000' '1e30:31536000000' '1e999:31536000000' '2500.7:2500'; do
  ttl=${t%%:*}; want=${t##*:}
  rcli DEL T >/dev/null
  rcli HSET T tok 1 rlock:meta "{\"ttl_ms\":$ttl}" >/dev/null
  r renew T --owner tok --json
  expect_rc 0 "renew with ttl_ms $ttl in the record"
  check "ttl_ms $ttl: the lease becomes $want (got $(jget "$OUT" ttl_ms))" test "$(jget "$OUT" ttl_ms)" = "$want"
  check "ttl_ms $ttl: the lock is still there" key_there T
done

# a re-entry reports the fencing counter, not the record's fence
r acquire FZ --owner fz --json
f=$(jget "$OUT" fence)
rcli HSET FZ rlock:meta '{"fence":999999999999999999}' >/dev/null
r acquire FZ --owner fz --json
expect_rc 0 "re-entry of a lock with a forged fence in its record"
check "re-entry reports the counter's fence ($f), not the record's (got $(jget "$OUT" fence))" \
  test "$(jget "$OUT" fence)" = "$f" -a "$(rcli GET 'redisson_lock_token:{FZ}')" = "$f"

# a huge value in the record does not make a huge reply (capped in the scripts)
rcli HSET BIG tok 1 >/dev/null
head -c 2000000 /dev/zero | tr '\0' 'x' | rcli -x HSET BIG rlock:meta >/dev/null
rcli PEXPIRE BIG 60000 >/dev/null
r status BIG
expect_rc 0 "status of a lock with a 2 MB record"
check "2 MB record: holder unknown" grep -q 'holder unknown' <<<"$OUT"
r acquire BIG
expect_rc 75 "busy on a lock with a 2 MB record"
check "2 MB record: the busy line is short (${#ERR} bytes)" test "${#ERR}" -lt 2000

# a hash with holders under a 'mode' no RReadWriteLock writes (forged, another
# program's): no reader joins it, no writer takes it, nothing changes
# (test_core_scripts_random, seed 34542: a reader had joined it)
rcli HSET ODDMODE mode 2 someone null >/dev/null
rcli PEXPIRE ODDMODE 60000 >/dev/null
before=$(rcli HGETALL ODDMODE | tr '\n' ' ')
r acquire -s ODDMODE --owner reader-1
expect_rc 75 "-s on a hash whose mode is '2': busy"
r acquire --write ODDMODE --owner writer-1
expect_rc 75 "--write on it: busy"
check "... and the hash is as it was ($(rcli HGETALL ODDMODE | tr '\n' ' '))" \
  test "$(rcli HGETALL ODDMODE | tr '\n' ' ')" = "$before"

finish
