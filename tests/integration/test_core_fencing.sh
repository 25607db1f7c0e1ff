#!/usr/bin/env bash
# Fencing tokens (Redisson's RFencedLock counter) and the rlock:meta holder record.
. "$(dirname "$0")/lib.sh"
start_redis


# --- strictly increasing fences across fresh acquisitions; re-entry keeps it
prev=0; ok=1; fences=""
for i in 1 2 3 4; do
  r acquire F --json
  [ "$RC" = 0 ] && is_json "$OUT" || { ok=0; break; }
  f=$(jget "$OUT" fence); o=$(jget "$OUT" owner); fences="$fences $f"
  [ "$f" -gt "$prev" ] 2>/dev/null || ok=0
  prev=$f
  if [ "$i" = 2 ]; then
    r acquire F --owner "$o" --json
    check "re-entry keeps the fence ($f)" test "$(jget "$OUT" fence)" = "$f" -a "$(jget "$OUT" reentered)" = true
  fi
  r release F --owner "$o" --all
done
echo "  fences:$fences"
check "fresh acquisitions get strictly increasing fences" test "$ok" = 1
check "counter key redisson_lock_token:{F} holds the last fence" test "$(rcli GET 'redisson_lock_token:{F}')" = "$prev"
check "the counter survives release" test "$(rcli EXISTS 'redisson_lock_token:{F}')" = 1

# an expired lock, retaken, also gets a new fence
r acquire F --ttl 200ms --json; f1=$(jget "$OUT" fence)
sleep 0.4
r acquire F --json; f2=$(jget "$OUT" fence)
check "a lock retaken after expiry gets a higher fence ($f1 -> $f2)" test "$f2" -gt "$f1"

# a new counter starts at the server's clock (ms): a Redis that lost its data
# (restart without persistence) does not hand out tokens below the old ones
t0=$(( $(rcli TIME | head -n1) * 1000 ))
r acquire FRESH --json; f_fresh=$(jget "$OUT" fence)
check "a new counter starts at the server's time in ms ($f_fresh vs ~$t0)" between "$f_fresh" "$t0" $((t0 + 2000))
r release FRESH --owner "$(jget "$OUT" owner)"
for i in 1 2 3; do r acquire FRESH; r release FRESH --owner "$OUT"; done
before=$(rcli GET 'redisson_lock_token:{FRESH}')
rcli DEL FRESH 'redisson_lock_token:{FRESH}' >/dev/null # what a restart without persistence leaves
sleep 0.01
r acquire FRESH --json; after=$(jget "$OUT" fence)
check "after the server lost its data the next token is still higher ($before -> $after)" test "$after" -gt "$before"
r release FRESH --owner "$(jget "$OUT" owner)"

# counter continues from an existing RFencedLock counter value
rcli SET 'redisson_lock_token:{G}' 41 >/dev/null
r acquire G --json
check "fence continues an existing counter (42)" test "$(jget "$OUT" fence)" = 42

# --- a name holding '{': key is redisson_lock_token:NAME
r acquire 'NA{x}ME' --json
expect_rc 0 "acquire NA{x}ME"
check "counter key for NA{x}ME is redisson_lock_token:NA{x}ME" test "$(rcli GET 'redisson_lock_token:NA{x}ME')" = "$(jget "$OUT" fence)"
check "no redisson_lock_token:{NA{x}ME} key" test "$(rcli EXISTS 'redisson_lock_token:{NA{x}ME}')" = 0

# --- status reports the fence
r status F --json
check "status --json fence equals the last fence" test "$(jget "$OUT" locks.0.fence)" = "$f2"

# --- the rlock:meta field
r acquire M --ttl 45s --json
fm=$(jget "$OUT" fence)
meta=$(rcli HGET M rlock:meta)
echo "  rlock:meta = $meta"
check "rlock:meta is JSON" is_json "$meta"
check "rlock:meta has host, pid, command, acquired_at_ms, ttl_ms, fence, version" python3 -c '
import json,sys
m=json.loads(sys.argv[1])
for k in ("host","pid","command","acquired_at_ms","ttl_ms","fence","version"):
    assert k in m, k
assert isinstance(m["pid"], int) and m["pid"] > 0
assert isinstance(m["host"], str) and m["host"]
assert isinstance(m["command"], str)
assert m["ttl_ms"] == 45000, m["ttl_ms"]
assert m["fence"] == int(sys.argv[2]), (m["fence"], sys.argv[2])
assert isinstance(m["version"], str) and m["version"]
' "$meta" "$fm"
# acquired_at_ms is server time
srv_ms=$(rcli TIME | python3 -c 'import sys; s,u=sys.stdin.read().split(); print(int(s)*1000+int(u)//1000)')
check "acquired_at_ms is the server's time (within 5s)" python3 -c '
import json,sys; m=json.loads(sys.argv[1]); assert abs(m["acquired_at_ms"]-int(sys.argv[2])) < 5000' "$meta" "$srv_ms"
check "host in meta is this host" python3 -c '
import json,sys,socket; m=json.loads(sys.argv[1]); h=socket.gethostname(); assert m["host"] in (h, h.split(".")[0], socket.getfqdn()), (m["host"], h)' "$meta"
check "version in meta equals rlock --version" grep -qF "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["version"])' "$meta")" <<<"$("$RLOCK" --version)"

finish
