#!/usr/bin/env bash
# Lua scripts: EVALSHA of the embedded lua/*.lua, reloaded after SCRIPT FLUSH (NOSCRIPT).
. "$(dirname "$0")/lib.sh"
start_redis
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

# --- the SHA the binary sends equals SCRIPT LOAD of lua/<script>.lua
# (the file byte for byte: redis-cli -x, since "$(cat f)" would drop the final newline)
r -v acquire S --owner o
expect_rc 0 "acquire -v"
sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | head -1 | awk '{print $3}')
sha_srv=$(rcli -x SCRIPT LOAD <"$SRC/lua/acquire.lua")
echo "  acquire: binary $sha_bin, SCRIPT LOAD $sha_srv"
check "-v logs '> EVALSHA <sha>'" test -n "$sha_bin"
check "acquire SHA equals SCRIPT LOAD of lua/acquire.lua" test "$sha_bin" = "$sha_srv"
check "acquire SHA equals sha1 of lua/acquire.lua" test "$sha_bin" = "$(sha1sum <"$SRC/lua/acquire.lua" | cut -c1-40)"

for op in renew release; do
  r -v "$op" S --owner o
  sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | head -1 | awk '{print $3}')
  sha_srv=$(rcli -x SCRIPT LOAD <"$SRC/lua/$op.lua")
  echo "  $op: binary $sha_bin, SCRIPT LOAD $sha_srv"
  check "$op SHA equals SCRIPT LOAD of lua/$op.lua" test -n "$sha_bin" -a "$sha_bin" = "$sha_srv"
done
r acquire S2
r -v force-unlock S2
sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | tail -1 | awk '{print $3}')
sha_srv=$(rcli -x SCRIPT LOAD <"$SRC/lua/force_unlock.lua")
check "force-unlock SHA equals SCRIPT LOAD of lua/force_unlock.lua" test -n "$sha_bin" -a "$sha_bin" = "$sha_srv"

# --- SCRIPT FLUSH between calls: NOSCRIPT, load, retry once
rcli SCRIPT FLUSH >/dev/null
r -v acquire S --owner p
expect_rc 0 "acquire after SCRIPT FLUSH"
check "the lock was taken after the flush" test "$(rcli HGET S p)" = 1
check "acquire reloaded the script (SCRIPT LOAD seen in -v)" grep -q 'SCRIPT LOAD' <<<"$ERR"
check "acquire after flush counted once (not twice by the retry)" test "$(rcli HGET S p)" = 1
check "no rlock: error line for the NOSCRIPT recovery" bash -c '! grep -v "^rlock: [<>]" <<<"$1" | grep -qi "error:\|failed"' _ "$ERR"

rcli SCRIPT FLUSH >/dev/null
r renew S --owner p --ttl 50s
expect_rc 0 "renew after SCRIPT FLUSH"
p=$(rcli PTTL S); check "renew after flush applied (PTTL $p)" test "$p" -gt 49000

rcli SCRIPT FLUSH >/dev/null
r acquire S --owner p
expect_rc 0 "re-enter after SCRIPT FLUSH"
check "re-entry after flush counted once (count 2)" test "$(rcli HGET S p)" = 2

rcli SCRIPT FLUSH >/dev/null
r release S --owner p
expect_rc 0 "release after SCRIPT FLUSH"
check "release after flush undid exactly one level" test "$(rcli HGET S p)" = 1

rcli SCRIPT FLUSH >/dev/null
r release S --owner p
expect_rc 0 "final release after SCRIPT FLUSH"
check "lock gone" test "$(rcli EXISTS S)" = 0

rcli SCRIPT FLUSH >/dev/null
r status S
expect_rc 1 "status of the free lock after SCRIPT FLUSH"

rcli SET S3 x >/dev/null
rcli SCRIPT FLUSH >/dev/null
r force-unlock S3
expect_rc 0 "force-unlock after SCRIPT FLUSH"
check "force-unlock removed the key" test "$(rcli EXISTS S3)" = 0

# --- no script text is built from user input: a name that looks like Lua
evil="x') redis.call('FLUSHALL') --"
rcli SET canary 1 >/dev/null
r acquire "$evil"
expect_rc 0 "acquire a Lua-looking name"
check "the canary key survived" test "$(rcli GET canary)" = 1
check "the Lua-looking name is a plain key" test "$(rcli TYPE "$evil")" = hash

finish
