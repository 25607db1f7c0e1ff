#!/usr/bin/env bash
# Lock names with quotes, brackets, newlines and unicode round-trip; bad names are usage errors.
. "$(dirname "$0")/lib.sh"
start_redis

# json_name_is JSON NAME: locks[0].name equals NAME byte for byte
json_name_is() { python3 -c 'import json,sys,os
d=json.loads(sys.argv[1]); want=os.fsdecode(os.fsencode(sys.argv[2]))
assert d["locks"][0]["name"] == want, (d["locks"][0]["name"], want)' "$1" "$2"; }

names=($'a"b\nc' 'ключ' 'x[1]{tag}' "it's \"quoted\"" $'tab\there' 'back\slash' 'sp ace' '🔒 lock' $'cr\rlf')
i=0
for n in "${names[@]}"; do
  i=$((i + 1))
  label=$(printf '%q' "$n")
  r acquire "$n" --owner "o$i"
  expect_rc 0 "acquire $label"
  check "$label: the Redis key is the name exactly" test "$(rcli HGET "$n" "o$i")" = 1
  r status "$n" --json
  expect_rc 0 "status $label"
  check "$label: status --json parses" is_json "$OUT"
  check "$label: status --json name round-trips" json_name_is "$OUT" "$n"
  r acquire "$n" --owner other
  expect_rc 75 "$label: busy for another owner"
  check "$label: busy error stays one line" one_err_line
  r release "$n" --owner other
  expect_rc 1 "$label: wrong-owner release"
  check "$label: release error stays one line" one_err_line
  r status "$n"
  # the table (header, the row), a blank line, then the lock's details
  check "$label: status text stays a row and a line" test "$(printf '%s\n' "$OUT" | wc -l)" -eq 4
  r release "$n" --owner "o$i"
  expect_rc 0 "release $label"
  check "$label: key gone" test "$(rcli EXISTS "$n")" = 0
  r status "$n"
  expect_rc 1 "$label: status of the free lock"
done

# the channel/counter of a name with a hash tag
r acquire 'x[1]{tag}' --json --owner t
check "x[1]{tag}: fencing counter redisson_lock_token:x[1]{tag}" test "$(rcli EXISTS 'redisson_lock_token:x[1]{tag}')" = 1
r release 'x[1]{tag}' --owner t

# --- bad names
r acquire ''
expect_rc 64 "empty name"
check "empty name: one line 'rlock: '" one_err_line
long=$(head -c 1025 /dev/zero | tr '\0' a)
r acquire "$long"
expect_rc 64 "1025-byte name"
check "1025-byte name: one line 'rlock: '" one_err_line
r status "$long"
expect_rc 64 "status of a 1025-byte name"
ok=$(head -c 1024 /dev/zero | tr '\0' a)
r acquire "$ok"
expect_rc 0 "1024-byte name is fine"
r release "$ok" --owner "$OUT"
expect_rc 0 "release the 1024-byte name"
# 1025 bytes made of multi-byte characters (bytes, not characters, count)
u=$(python3 -c 'print("я"*512 + "a", end="")')
r acquire "$u"
expect_rc 64 "1025-byte name of 2-byte characters"
for bad in 'a{b' 'a}b' 'x{}y' '{a{b'; do
  r acquire "$bad"
  expect_rc 64 "name '$bad' whose companion keys leave its hash slot"
  check "'$bad': one line 'rlock: '" one_err_line
  check "'$bad': nothing written" test "$(rcli EXISTS "$bad")" = 0
done
r release 'a{b' --owner o
expect_rc 64 "release with a bad name"
r renew 'a}b' --owner o
expect_rc 64 "renew with a bad name"
r force-unlock 'a{b'
expect_rc 64 "force-unlock with a bad name"
r status 'a}b'
expect_rc 64 "status with a bad name"
check "no key written for the bad names" bash -c '! redis-cli -p "$1" --scan | grep -qF -e "a{b" -e "a}b" -e "x{}y"' _ "$REDIS_PORT"

# --- a name starting with '-' after the '--' end-of-options marker
r acquire --owner d -- -dash
expect_rc 0 "acquire --owner d -- -dash"
check "-dash: the key exists" test "$(rcli HGET -dash d)" = 1
r status -- -dash
expect_rc 0 "status -- -dash"
r release --owner d -- -dash
expect_rc 0 "release --owner d -- -dash"

finish
