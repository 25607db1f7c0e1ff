#!/usr/bin/env bash
# A malformed, forged or absent rlock:meta never breaks a command: status (named, listed,
# --json), acquire (busy message and --json), release, renew and force-unlock all work,
# showing "holder unknown" or the part of the record that can be read. Nothing in the
# record is believed: renew clamps its ttl_ms, a re-entry reports the fencing counter.
# And companion keys of another type (issue 44): refused with nothing changed, or left alone.
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


# Issue 44: a lock's companion keys of another type, or a fencing counter INCR
# cannot raise (test_core_scripts_random's open finding). Before lua/lib/damaged.lua
# the scripts stopped midway on Redis's own refusal (exit 70, WRONGTYPE / not an
# integer / overflow), keeping what they had written. Now: a key a request cannot do
# without makes it answer DAMAGED (exit 70, one line naming the key, nothing
# changed); a key that only orders waiters is left alone and the request goes on.
# every_key NAME: each of NAME's keys (NAME and those with {NAME} in them), its
# type, content and whether it expires, one line each, sorted.
every_key() {
  local key
  { echo "$1"; rcli --scan --pattern "*{$1}*"; } | sort -u | while IFS= read -r key; do
    [ "$(rcli EXISTS "$key")" = 1 ] || continue
    printf '%s %s %s %s\n' "$key" "$(rcli TYPE "$key")" "$(rcli DUMP "$key" | od -An -tx1 | tr -d ' \n')" \
      "$(if [ "$(rcli PTTL "$key")" -gt 0 ]; then echo expires; else echo kept; fi)"
  done
}
# damaged KEY: the last r answered DAMAGED for KEY: exit 70, one line naming it.
damaged() {
  [ "$RC" = 70 ] && one_err_line && [[ $ERR == *"the key $1 is "*": nothing changed (delete that key"* ]] &&
    [[ $ERR != *WRONGTYPE* && $ERR != *"not an integer"* && $ERR != *overflow* ]]
}

# The fencing counter at 2^63-1 (INCR's overflow), 2^53-1 (its token would not be
# exact in Lua's numbers), negative, text, a fraction, a hash: a fresh acquisition
# of each mode refuses, nothing is written (no history either).
for value in 9223372036854775807 9007199254740991 -5 abc 1.5 ' 3' 007 HASH; do
  for mode in "" --fair --shared --write "--limit 2"; do
    N=F$RANDOM; label="counter '$value', acquire $mode"
    if [ "$value" = HASH ]; then rcli HSET "redisson_lock_token:{$N}" a 1 >/dev/null
    else rcli SET "redisson_lock_token:{$N}" "$value" >/dev/null; fi
    before=$(every_key "$N")
    # shellcheck disable=SC2086
    r acquire "$N" $mode
    check "$label: DAMAGED, names the counter ($ERR)" damaged "redisson_lock_token:{$N}"
    check "$label: nothing written" test "$(every_key "$N")" = "$before"
  done
done
# The highest counter that gives an exact token is fine (it used to give the
# token -2^63 from 2^63-2: Lua's numbers are doubles), and so is 0.
rcli SET "redisson_lock_token:{FMAX}" 9007199254740990 >/dev/null
r acquire FMAX --json
expect_rc 0 "counter 2^53-2: acquired"
check "... with the token 2^53-1" test "$(jget "$OUT" fence)" = 9007199254740991
rcli SET "redisson_lock_token:{FBIG}" 9223372036854775806 >/dev/null
r acquire FBIG --json
check "counter 2^63-2: DAMAGED, not the token -2^63 ($ERR)" damaged "redisson_lock_token:{FBIG}"
check "... the counter as it was" test "$(rcli GET "redisson_lock_token:{FBIG}")" = 9223372036854775806
rcli SET "redisson_lock_token:{FZERO}" 0 >/dev/null
r acquire FZERO
expect_rc 0 "counter 0: acquired"
# A re-entry takes no token: it goes on (its fence then 0: the counter cannot be read).
r acquire FRE --owner re1
rcli SET "redisson_lock_token:{FRE}" abc >/dev/null
r acquire FRE --owner re1 --json
expect_rc 0 "counter 'abc': a re-entry goes on"
check "... its fence 0 (none readable)" test "$(jget "$OUT" fence)" = 0

# A read-write lock's leftover hash with no owner: a reader's acquisition with
# a counter of another type used to clear it, then fail (seed 1 case 16's kind).
rcli HSET RWLEFT mode read rlock:meta:gone '{}' >/dev/null
rcli HSET "redisson_lock_token:{RWLEFT}" x 1 >/dev/null
before=$(every_key RWLEFT)
r acquire -s RWLEFT --owner reader-1
check "owner-less read-write hash, counter a hash: DAMAGED ($ERR)" damaged "redisson_lock_token:{RWLEFT}"
check "... and the hash is still there, as it was" test "$(every_key RWLEFT)" = "$before"

# A permit's records of another type: the acquisition used to take the permit,
# count it and take a token, then fail on the record.
r acquire PREC --limit 2 --owner p1
expect_rc 0 "a semaphore of 2"
rcli DEL "rlock_permits:{PREC}" >/dev/null
rcli SET "rlock_permits:{PREC}" junk >/dev/null
before=$(every_key PREC)
r acquire PREC --limit 2 --owner p2
check "permit records a string: DAMAGED ($ERR)" damaged "rlock_permits:{PREC}"
check "... no permit taken, nothing counted" test "$(every_key PREC)" = "$before"
r release PREC --limit 2 --owner p1
check "... and p1's release says so too, changing nothing" damaged "rlock_permits:{PREC}"
check "... nothing changed" test "$(every_key PREC)" = "$before"

# A fair waiter whose queue keys hold other types: DAMAGED, nothing written.
for key in "redisson_lock_queue:{FQ}" "redisson_lock_timeout:{FQ}" "rlock_waiters:{FQ}"; do
  rcli DEL "$key" >/dev/null
  rcli SET "$key" junk >/dev/null
  r acquire FQ --fair --owner f1 -w 1s
  check "--fair with $key a string: DAMAGED ($ERR)" damaged "$key"
  check "... nothing written" test "$(every_key FQ)" = "$(printf '%s string %s kept' "$key" "$(rcli DUMP "$key" | od -An -tx1 | tr -d ' \n')")"
  rcli DEL "$key" >/dev/null
done

# Keys that only order waiters are left alone: the queue as a plain lock sees
# it, the plain waiters' turns, the writers' intents. Release, force-unlock,
# a waiter and a writer go on as if they were absent.
for key in "redisson_lock_queue:{WQ}" "redisson_lock_timeout:{WQ}" "rlock_turns:{WQ}"; do
  r acquire WQ --owner h1
  expect_rc 0 "held by h1"
  rcli SET "$key" junk >/dev/null
  [[ $key == redisson_lock_timeout* ]] && rcli RPUSH "redisson_lock_queue:{WQ}" someone >/dev/null
  r acquire WQ --owner w1 -w 300ms
  expect_rc 75 "$key a string: a waiter waits and gives up as usual"
  r release WQ --owner h1
  expect_rc 0 "$key a string: the owner's release frees the lock"
  check "... it is free" key_gone WQ
  check "... and $key is as it was" test "$(rcli GET "$key")" = junk
  r acquire WQ --owner h2
  r force-unlock WQ
  expect_rc 0 "$key a string: force-unlock removes the lock"
  check "... it is free" key_gone WQ
  check "... and $key is as it was" test "$(rcli GET "$key")" = junk
  rcli DEL "$key" "redisson_lock_queue:{WQ}" >/dev/null
done
rcli SET "rlock_write_intent:{WI}" junk >/dev/null
r acquire WI -s --owner rd1
expect_rc 0 "writers' intents a string: a reader takes the read lock"
r acquire WI --write --owner wr1 -w 300ms
expect_rc 75 "... a writer waits for it and gives up, as usual"
check "... the intents key is as it was" test "$(rcli GET "rlock_write_intent:{WI}")" = junk
r release WI -s --owner rd1
expect_rc 0 "... the reader releases"
r acquire WI --write --owner wr1
expect_rc 0 "... and the writer takes it"

# ---- a server that refuses every write (maxmemory reached, noeviction): the
# acquisition says the server's OOM as it is, not that the fencing counter is
# damaged (the soak's evict fault had one such acquisition told to delete a
# sound counter)
rcli SET "redisson_lock_token:{OOM}" 41 >/dev/null
used=$(rcli INFO memory | tr -d '\r' | sed -n 's/^used_memory://p')
rcli CONFIG SET maxmemory-policy noeviction >/dev/null
rcli CONFIG SET maxmemory "$(( used / 2 ))" >/dev/null
r acquire OOM --owner o1
rcli CONFIG SET maxmemory 0 >/dev/null
check "at maxmemory: exit 70, one line with the server's OOM ($ERR)" \
  eval '[ "$RC" = 70 ] && one_err_line && [[ $ERR == *OOM* ]] && [[ $ERR != *DAMAGED* && $ERR != *"delete that key"* ]]'
check "... the counter and the lock are as they were" \
  eval '[ "$(rcli GET "redisson_lock_token:{OOM}")" = 41 ] && [ "$(rcli EXISTS OOM)" = 0 ]'
r acquire OOM --owner o1
expect_rc 0 "... once memory is free again, the lock is taken"

finish
