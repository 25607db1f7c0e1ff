#!/usr/bin/env bash
# status lists every lock: SCAN runs to cursor 0 (12 000 locks, more than any old
# bound), and a huge hash that SCAN matches does not make a huge reply (inspect.lua
# caps what it returns per hash; a hash with more than 256 fields is not a lock).
. "$(dirname "$0")/lib.sh"
start_redis
N=12000

# 12 000 locks in one script call: Redisson-shaped (owner = count, a lease), every
# tenth with rlock's record; plus unrelated hashes that must not be listed.
rcli EVAL "for i = 1, $N do
  local k = 'lk:' .. i
  redis.call('HSET', k, 'owner-' .. i, 1)
  if i % 10 == 0 then redis.call('HSET', k, 'rlock:meta', '{\"host\":\"h\",\"pid\":1}') end
  redis.call('PEXPIRE', k, 600000)
end
for i = 1, 500 do redis.call('HSET', 'user:' .. i, 'name', 'x') end
return 1" 0 >/dev/null
check "$N lock hashes exist" test "$(rcli EVAL "return #redis.call('KEYS', 'lk:*')" 0)" = "$N"

# big: RLOCK ARGS... with stdout in $TEST_TMP/big (too large for a variable check); sets RC
big() { "$RLOCK" "$@" >"$TEST_TMP/big" 2>"$TEST_TMP/err"; RC=$?; OUT="(in $TEST_TMP/big)"; ERR=$(head -c 500 "$TEST_TMP/err"); }
t0=$(now_ms)
big status
t=$(( $(now_ms) - t0 ))
echo "  status of $N locks: ${t}ms, $(wc -l <"$TEST_TMP/big") lines"
expect_rc 0 "status"
check "status lists all $N locks (got $(grep -c '^lk:' "$TEST_TMP/big"))" test "$(grep -c '^lk:' "$TEST_TMP/big")" = "$N"
check "status lists no unrelated hash" test "$(grep -c '^user:' "$TEST_TMP/big")" = 0
check "every listed lock once (no duplicates)" test "$(grep '^lk:' "$TEST_TMP/big" | cut -d: -f1-2 | sort -u | wc -l)" = "$N"

t0=$(now_ms)
big status --json
t=$(( $(now_ms) - t0 ))
echo "  status --json of $N locks: ${t}ms"
expect_rc 0 "status --json"
check "status --json lists all $N locks, names and owners right" python3 -c '
import json,sys
locks = json.load(open(sys.argv[1]))["locks"]
names = {l["name"] for l in locks}
assert len(locks) == int(sys.argv[2]) and names == {"lk:%d" % i for i in range(1, int(sys.argv[2]) + 1)}, len(locks)
assert all(l["owner"] == "owner-" + l["name"][3:] and l["count"] == 1 for l in locks)
assert sum(1 for l in locks if l["holder"] is not None) == int(sys.argv[2]) // 10' "$TEST_TMP/big" "$N"
big status --match 'lk:1*' --json
check "--match lk:1* lists exactly the matching locks" python3 -c '
import json,sys
n = {l["name"] for l in json.load(open(sys.argv[1]))["locks"]}
assert n == {"lk:%d" % i for i in range(1, 12001) if str(i).startswith("1")}, len(n)' "$TEST_TMP/big"

# --- a huge hash that SCAN matches: not a lock, and no huge reply for it
rcli EVAL "for i = 1, 20000 do redis.call('HSET', 'huge', 'field-' .. i, 1) end
redis.call('PEXPIRE', 'huge', 600000) return 1" 0 >/dev/null
rcli EVAL "redis.call('HSET', 'wide', 'tok', 1, 'rlock:meta', string.rep('x', 1000000))
redis.call('PEXPIRE', 'wide', 600000) return 1" 0 >/dev/null
out_bytes() { rcli INFO stats | tr -d '\r' | sed -n 's/^total_net_output_bytes://p'; }
b0=$(out_bytes)
big status huge --json
b1=$(out_bytes)
echo "  status huge: the server sent $((b1 - b0)) bytes for a hash of 20000 fields"
expect_rc 0 "status of a 20000-field hash: held"
check "a 20000-field hash shows no owners" python3 -c '
import json,sys; l=json.load(open(sys.argv[1]))["locks"][0]; assert l["owners"] == [] and l["held"], l' "$TEST_TMP/big"
check "a 20000-field hash costs a small reply ($((b1 - b0)) bytes < 10000)" test $((b1 - b0)) -lt 10000
b0=$(out_bytes)
big status wide
b1=$(out_bytes)
expect_rc 0 "status of a lock whose record is 1 MB"
check "a 1 MB record costs a small reply ($((b1 - b0)) bytes < 10000)" test $((b1 - b0)) -lt 10000
check "a 1 MB record: holder unknown" grep -q 'holder unknown' "$TEST_TMP/big"
b0=$(out_bytes)
big status --match 'huge'
b1=$(out_bytes)
check "the listing does not show the huge hash" test ! -s "$TEST_TMP/big"
check "listing past the huge hash costs a small reply ($((b1 - b0)) bytes < 10000)" test $((b1 - b0)) -lt 10000
r acquire huge
expect_rc 75 "acquire of the huge hash is busy"
check "busy on the huge hash is one short line" test "${#ERR}" -lt 300

finish
