#!/usr/bin/env bash
# Redlock (several URLs = independent masters): 3 masters, and a set of 5 for the
# two-of-five cases. The lock is rlock's normal layout on each node; acquire holds
# only with a majority, leaves nothing of its own behind when it fails (75: others
# hold too many nodes; 69: too many nodes down or too slow, within the per-node
# timeout); release/renew/status/force-unlock over all nodes; --json per node;
# fencing tokens only grow (5 acquisitions, a node restarted empty, skewed
# counters) and are written back to the granting nodes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_masters 3
M3=("${MASTER_SET[@]}") U3=$REDLOCK_URLS
start_masters 5
M5=("${MASTER_SET[@]}") U5=$REDLOCK_URLS
export RLOCK_URL=$U3
MASTER_SET=("${M3[@]}") # the default set of the topology.sh helpers
# Short connect/I-O timeouts: a dead or frozen node costs at most 500ms.
TO=(--connect-timeout 500ms --io-timeout 500ms)

jg() { jget "$@" 2>/dev/null; } # quiet when the output is not JSON
isnum() { [[ ${1:-} =~ ^-?[0-9]+$ ]]; }
# gt A B / inrange V LO HI: numeric comparisons that fail (quietly) on a non-number.
gt() { isnum "$1" && isnum "$2" && [ "$1" -gt "$2" ]; }
inrange() { isnum "$1" && between "$1" "$2" "$3"; }
# same N A B: N is a number and A = B (for "the fence N is on every node").
same() { isnum "$1" && [ "$2" = "$3" ]; }
# hget_each NAME FIELD I...: FIELD of hash NAME on each master, space-separated.
hget_each() { local n=$1 f=$2 i; shift 2; for i in "$@"; do printf '%s ' "$(mcli "$i" HGET "$n" "$f")"; done; echo; }
# index_of_port PORT: the master index with that port.
index_of_port() { local i; for i in "${!MASTER_PORTS[@]}"; do [ "${MASTER_PORTS[$i]}" = "$1" ] && echo "$i"; done; }
# node_field JSON NODES_PATH I FIELD: FIELD of the entry of NODES_PATH (a list of
# {"url",...}) whose url names master I's port ("missing" when there is none).
node_field() {
  python3 -c 'import json,re,sys
d=json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    d = d[int(k)] if k.isdigit() else d[k]
for n in d:
    m = re.search(r":(\d+)/?(\d+)?$", str(n.get("url", "")))
    if m and m.group(1) == sys.argv[3]:
        v = n.get(sys.argv[4], "missing")
        print(json.dumps(v) if not isinstance(v, str) else v); break
else:
    print("missing")' "$1" "$2" "${MASTER_PORTS[$3]}" "$4" 2>/dev/null || echo missing
}
# granted_indices JSON: the masters an acquire --json says granted, space-separated.
granted_indices() {
  local p
  for p in $(python3 -c 'import json,re,sys
for n in json.loads(sys.argv[1]).get("nodes", []):
    m = re.search(r":(\d+)/?(\d+)?$", str(n.get("url", "")))
    if n.get("granted") is True and m: print(m.group(1))' "$1" 2>/dev/null); do
    printf '%s ' "$(index_of_port "$p")"
  done
  echo
}

# ------------------------------------------------------------------ all up
r "${TO[@]}" acquire A --ttl 30s
expect_rc 0 "3 masters up: acquire A"
OWN=$OUT
check "A is on every node (HGET A owner: $(hget_each A "$OWN" "${M3[@]}"))" test "$(hget_each A "$OWN" "${M3[@]}")" = "1 1 1 "
ok=1; for i in "${M3[@]}"; do p=$(mcli "$i" PTTL A); inrange "$p" 25000 30000 || ok=0; done
check "A has the 30s lease on every node" test "$ok" = 1
ok=1; for i in "${M3[@]}"; do is_json "$(mcli "$i" HGET A rlock:meta)" || ok=0; done
check "every node has the rlock:meta record" test "$ok" = 1
f0=$(fence_on 0 A); f1=$(fence_on 1 A); f2=$(fence_on 2 A)
check "the fencing counter is the same on every node ($f0 $f1 $f2)" test -n "$f0" -a "$f0" = "$f1" -a "$f1" = "$f2"
r "${TO[@]}" acquire A -n --owner intruder
expect_rc 75 "acquire A -n by another owner: busy"
check "the busy attempt left nothing of its own" held_nowhere A intruder
r "${TO[@]}" release A --owner "$OWN"
expect_rc 0 "release A"
check "A is gone from every node (on: $(nodes_with_key A))" test -z "$(nodes_with_key A | tr -d ' ')"
r "${TO[@]}" release A --owner "$OWN"
expect_rc 1 "release A again: no node has it"

# -u given several times is the same as the comma list
r -u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)" "${TO[@]}" acquire B --ttl 30s
expect_rc 0 "acquire B with -u three times"
OWNB=$OUT
check "B is on every node" held_everywhere B "$OWNB"
r "${TO[@]}" release B --owner "$OWNB"
expect_rc 0 "release B through RLOCK_URL (comma list)"
check "B is gone from every node" test -z "$(nodes_with_key B | tr -d ' ')"

# renew on every node; a wrong owner renews nothing
r "${TO[@]}" acquire C --ttl 5s
OWNC=$OUT
r "${TO[@]}" renew C --owner "$OWNC" --ttl 20s
expect_rc 0 "renew C --ttl 20s"
ok=1; for i in "${M3[@]}"; do p=$(mcli "$i" PTTL C); inrange "$p" 15000 20000 || ok=0; done
check "C's lease is 20s on every node" test "$ok" = 1
r "${TO[@]}" renew C --owner nobody
expect_rc 1 "renew C by a wrong owner: lost"
check "and C is still ours everywhere" held_everywhere C "$OWNC"
r "${TO[@]}" force-unlock C
expect_rc 0 "force-unlock C"
check "C is gone from every node" test -z "$(nodes_with_key C | tr -d ' ')"
r "${TO[@]}" force-unlock C
expect_rc 1 "force-unlock C again: nothing to remove"

# 5 masters all up
RLOCK_URL=$U5 r "${TO[@]}" acquire A5 --ttl 30s
expect_rc 0 "5 masters up: acquire A5"
OWN5=$OUT
check "A5 is on all 5 nodes" held_everywhere A5 "$OWN5" "${M5[@]}"
RLOCK_URL=$U5 r "${TO[@]}" release A5 --owner "$OWN5"
expect_rc 0 "release A5"
check "A5 is gone from all 5 nodes" test -z "$(nodes_with_key A5 "${M5[@]}" | tr -d ' ')"

# a lock to release / renew / look at while nodes go down below
r "${TO[@]}" acquire F --ttl 60s
OWNF=$OUT

# ------------------------------------------------------------------ one of 3 down
stop_master 2
t0=$(ms)
r "${TO[@]}" --json acquire D --ttl 30s
d=$(( $(ms) - t0 ))
expect_rc 0 "one of 3 down: acquire D"
OWND=$(jg "$OUT" owner)
check "D is on the two live nodes" held_everywhere D "$OWND" 0 1
check "--json: the live nodes granted, the dead one did not ($(node_field "$OUT" nodes 0 granted) $(node_field "$OUT" nodes 1 granted) $(node_field "$OUT" nodes 2 granted))" \
  test "$(node_field "$OUT" nodes 0 granted) $(node_field "$OUT" nodes 1 granted) $(node_field "$OUT" nodes 2 granted)" = "true true false"
check "one of 3 down: acquire takes well under the per-node timeout budget (${d}ms < 2000ms + SLACK_MS)" test "$d" -lt $(( 2000 + SLACK_MS ))
r "${TO[@]}" renew D --owner "$OWND"
expect_rc 0 "one of 3 down: renew D (2 of 3 renewed)"
r "${TO[@]}" status D
expect_rc 0 "one of 3 down: status D (held on 2 of 3)"
r "${TO[@]}" release D --owner "$OWND"
expect_rc 0 "one of 3 down: release D"
check "D is gone from the live nodes" test -z "$(nodes_with_key D 0 1 | tr -d ' ')"

# two of 5 down, then three of 5
stop_master "${M5[3]}"; stop_master "${M5[4]}"
RLOCK_URL=$U5 r "${TO[@]}" acquire D5 --ttl 30s
expect_rc 0 "two of 5 down: acquire D5"
OWND5=$OUT
check "D5 is on the 3 live nodes" held_everywhere D5 "$OWND5" "${M5[0]}" "${M5[1]}" "${M5[2]}"
RLOCK_URL=$U5 r "${TO[@]}" release D5 --owner "$OWND5"
expect_rc 0 "two of 5 down: release D5"
check "D5 is gone from the live nodes" test -z "$(nodes_with_key D5 "${M5[0]}" "${M5[1]}" "${M5[2]}" | tr -d ' ')"
stop_master "${M5[2]}"
t0=$(ms)
RLOCK_URL=$U5 r "${TO[@]}" acquire E5 --ttl 10s --owner mine5
d=$(( $(ms) - t0 ))
expect_rc 69 "three of 5 down: acquire E5"
check "three of 5 down: fails within the per-node timeout (${d}ms < 2000ms + SLACK_MS, TTL 10s)" test "$d" -lt $(( 2000 + SLACK_MS ))
check "three of 5 down: nothing of ours on the live nodes" held_nowhere E5 mine5 "${M5[0]}" "${M5[1]}"
check "three of 5 down: no key E5 on the live nodes" test -z "$(nodes_with_key E5 "${M5[0]}" "${M5[1]}" | tr -d ' ')"

# ------------------------------------------------------------------ two of 3 down
stop_master 1
t0=$(ms)
r "${TO[@]}" acquire E --ttl 10s --owner mine
d=$(( $(ms) - t0 ))
expect_rc 69 "two of 3 down (killed): acquire E"
check "two of 3 down: fails within the per-node timeout (${d}ms < 2000ms + SLACK_MS, TTL 10s)" test "$d" -lt $(( 2000 + SLACK_MS ))
check "two of 3 down: one 'rlock: ' error line" one_err_line
check "two of 3 down: nothing of ours left on the live node (HEXISTS E mine)" held_nowhere E mine 0
check "two of 3 down: no key E on the live node" test "$(mcli 0 EXISTS E)" = 0
r "${TO[@]}" status F
expect_rc 69 "two of 3 down: status F cannot tell whether a majority holds it (1 of 3 answered)"
r "${TO[@]}" renew F --owner "$OWNF"
expect_rc 69 "two of 3 down: renew F (renewed on 1, 2 unreachable)"
r "${TO[@]}" release F --owner "$OWNF"
expect_rc 69 "two of 3 down: release F (only 1 of 3 answered)"

# frozen nodes (SIGSTOP: connections accepted, nothing answered): the per-node
# timeout, not the TTL, bounds the attempt
restart_master_empty 1; restart_master_empty 2
# (one acquisition first, so the restarted servers have the scripts: a frozen
# server then applies the queued acquire when thawed, not a NOSCRIPT)
r "${TO[@]}" acquire WARM --owner warm && r "${TO[@]}" release WARM --owner warm
freeze_master 1; freeze_master 2
t0=$(ms)
r "${TO[@]}" acquire G --ttl 10s --owner mine
d=$(( $(ms) - t0 ))
expect_rc 69 "two of 3 frozen: acquire G"
check "two of 3 frozen: fails within the per-node timeouts (${d}ms < 2000ms + SLACK_MS, TTL 10s)" test "$d" -lt $(( 2000 + SLACK_MS ))
check "two of 3 frozen: nothing of ours left on the live node" held_nowhere G mine 0
thaw_master 1; thaw_master 2
# what they had queued runs now: the acquire, then the owner-checked release
# rlock sent every node it did not hear from (without awaiting its answer)
check "two of 3 frozen: once thawed, nothing of ours is left on them either" wait_until 1 held_nowhere G mine 1 2
echo "  after the thaw, G is on: [$(nodes_with_key G)] (PTTL $(mcli 1 PTTL G) $(mcli 2 PTTL G))"
del_on G; del_on F

# ------------------------------------------------------------------ held by another owner
foreign_lock 0 H other:1 30000; foreign_lock 1 H other:1 30000
t0=$(ms)
r "${TO[@]}" acquire H --ttl 10s --owner mine
d=$(( $(ms) - t0 ))
expect_rc 75 "H held by another owner on 2 of 3: acquire is busy"
check "busy: nothing of ours left on any node" held_nowhere H mine
check "busy: no key H on the free node 2" test "$(mcli 2 EXISTS H)" = 0
check "busy: the other owner's lock is untouched on 0 and 1" test "$(hget_each H other:1 0 1)" = "1 1 "
p=$(mcli 0 PTTL H)
check "busy: its lease is not changed ($p)" inrange "$p" 25000 30000
check "busy: answered at once (${d}ms < 1500ms + SLACK_MS)" test "$d" -lt $(( 1500 + SLACK_MS ))
r "${TO[@]}" --json acquire H --ttl 10s --owner mine
check "busy --json: acquired false (exit $RC)" test "$RC" = 75 -a "$(jg "$OUT" acquired)" = false
t0=$(ms)
r "${TO[@]}" acquire H --ttl 10s --owner mine -w 1s
d=$(( $(ms) - t0 ))
expect_rc 75 "busy with -w 1s: the wait runs out"
check "busy with -w 1s: about 1s (${d}ms in 900..3000)" inrange "$d" 900 3000
check "busy with -w 1s: nothing of ours left" held_nowhere H mine
del_on H

# ------------------------------------------------------------------ a stale lock on a minority
foreign_lock 2 S stale:1 30000
r "${TO[@]}" --json acquire S --ttl 30s --owner mine
expect_rc 0 "a stale lock on 1 of 3: acquire S"
check "S is ours on 0 and 1" held_everywhere S mine 0 1
check "--json: node 2 did not grant ($(node_field "$OUT" nodes 2 granted))" test "$(node_field "$OUT" nodes 2 granted)" = false
check "the stale lock on node 2 is untouched" test "$(mcli 2 HGET S stale:1)" = 1 -a "$(mcli 2 HEXISTS S mine)" = 0
r "${TO[@]}" status S
expect_rc 0 "status S: held on 2 of 3"
r "${TO[@]}" release S --owner mine
expect_rc 0 "release S"
check "S is gone from 0 and 1; the stale lock stays on 2" \
  test -z "$(nodes_with_key S 0 1 | tr -d ' ')" -a "$(mcli 2 HGET S stale:1)" = 1
del_on S

# ------------------------------------------------------------------ --json
t0=$(ms)
r "${TO[@]}" --json acquire J --ttl 20s
wall=$(( $(ms) - t0 ))
expect_rc 0 "acquire J --json"
echo "  $OUT"
why=$(python3 -c '
import json,sys
d=json.loads(sys.argv[1])
for k in ("name","acquired","owner","count","fence","ttl_ms","validity_ms","nodes"):
    assert k in d, "no " + k
assert d["name"] == "J" and d["acquired"] is True and d["count"] == 1, "name/acquired/count"
assert d["ttl_ms"] == 20000, "ttl_ms %r" % d["ttl_ms"]
assert isinstance(d["fence"], int) and d["fence"] > 0, "fence"
assert isinstance(d["nodes"], list) and len(d["nodes"]) == 3, "3 nodes"
for n in d["nodes"]:
    assert "url" in n and n.get("granted") is True, "node %r" % n
print("ok")' "$OUT" 2>&1 | tail -n 1)
check "acquire --json: name, acquired, owner, count, fence, ttl_ms, validity_ms, nodes[url, granted] ($why)" test "$why" = ok
v=$(jg "$OUT" validity_ms)
# validity = TTL - elapsed - (TTL/100 + 2ms): at most 20000 - 202, at least that
# minus the acquire's whole wall time
check "validity_ms ($v) is within [20000 - 202 - wall ${wall}ms, 20000 - 202]" inrange "$v" $((20000 - 202 - wall)) $((20000 - 202))
urls=$(python3 -c 'import json,sys; print(",".join(sorted(n["url"] for n in json.loads(sys.argv[1])["nodes"])))' "$OUT" 2>/dev/null)
check "nodes[].url are the three URLs" test "$urls" = "$(tr , '\n' <<<"$U3" | sort | paste -sd,)"
FJ=$(jg "$OUT" fence)
check "fence ($FJ) equals the counter on every node ($(fence_on 0 J) $(fence_on 1 J) $(fence_on 2 J))" \
  same "$FJ" "$(fence_on 0 J) $(fence_on 1 J) $(fence_on 2 J)" "$FJ $FJ $FJ"
metaf=$(for i in "${M3[@]}"; do mcli "$i" HGET J rlock:meta | python3 -c 'import json,sys; print(json.load(sys.stdin).get("fence"))' 2>/dev/null || echo none; done | paste -sd' ')
check "the holder record (rlock:meta) on every node names the fence ($metaf)" \
  same "$FJ" "$metaf" "$FJ $FJ $FJ"
r "${TO[@]}" release J --owner "$(jg "$OUT" owner)"

# ------------------------------------------------------------------ status per node
r "${TO[@]}" acquire K --ttl 30s --owner kown
mcli 2 DEL K >/dev/null
r "${TO[@]}" status K
expect_rc 0 "status K held on 2 of 3: held"
txt=$OUT
ok=1; for i in "${M3[@]}"; do grep -q "${MASTER_PORTS[$i]}" <<<"$txt" || ok=0; done
check "status K text shows each node" test "$ok" = 1
echo "$txt" | sed 's/^/  | /'
r "${TO[@]}" --json status K
expect_rc 0 "status --json K"
check "status --json: held, owner kown, 3 nodes" test "$(jg "$OUT" locks.0.held) $(jg "$OUT" locks.0.owner) $(jg "$OUT" locks.0.nodes | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null)" = "true kown 3"
check "status --json per node: held true true false" \
  test "$(node_field "$OUT" locks.0.nodes 0 held) $(node_field "$OUT" locks.0.nodes 1 held) $(node_field "$OUT" locks.0.nodes 2 held)" = "true true false"
check "status --json per node: owner kown on 0 and 1" \
  test "$(node_field "$OUT" locks.0.nodes 0 owner) $(node_field "$OUT" locks.0.nodes 1 owner)" = "kown kown"
t=$(node_field "$OUT" locks.0.nodes 0 ttl_ms)
check "status --json per node: ttl_ms of node 0 ($t)" inrange "$t" 20000 30000
mcli 1 DEL K >/dev/null
r "${TO[@]}" status K
expect_rc 1 "status K held on 1 of 3: not held"
r "${TO[@]}" --json status K
check "status --json: held false on 1 of 3" test "$(jg "$OUT" locks.0.held)" = false
del_on K
# two owners, one node each (made by plain single-node rlock): no majority
r -u "$(master_url 0)" acquire K2 --owner a --ttl 30s
r -u "$(master_url 1)" acquire K2 --owner b --ttl 30s
r "${TO[@]}" status K2
expect_rc 1 "status K2: a on one node, b on another: no majority"
del_on K2

# ------------------------------------------------------------------ listing
# Every master's view of every name a master lists: one that holds on all three,
# one put on master 0 alone. A master's own listing is its view of what it
# found; only the others are asked for L1 by name (one inspect each), so a name
# every master lists costs no second request.
r "${TO[@]}" acquire LA --ttl 30s --owner lown
mcli 0 HSET LB tok 1 >/dev/null
mcli 0 PEXPIRE LB 30000 >/dev/null
evalsha_calls() { mcli "$1" INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p'; }
before=$(for i in "${M3[@]}"; do evalsha_calls "$i"; done | paste -sd' ')
r "${TO[@]}" --json status --match 'L[AB]'
after=$(for i in "${M3[@]}"; do evalsha_calls "$i"; done | paste -sd' ')
expect_rc 0 "Redlock listing (--match)"
check "listing: LA held on 3 of 3 by lown, LB held by nobody's majority, each with 3 views" python3 -c '
import json,sys
d={l["name"]: l for l in json.loads(sys.argv[1])["locks"]}
assert sorted(d) == ["LA","LB"], d.keys()
assert d["LA"]["held"] and d["LA"]["owner"] == "lown" and d["LA"]["masters_holding"] == 3, d["LA"]
assert not d["LB"]["held"] and len(d["LB"]["nodes"]) == 3, d["LB"]
assert [n["held"] for n in d["LB"]["nodes"]] == [True, False, False], [n["held"] for n in d["LB"]["nodes"]]' "$OUT"
calls=$(python3 -c 'import sys; b=sys.argv[1].split(); a=sys.argv[2].split(); print(" ".join(str(int(x)-int(y)) for x,y in zip(a,b)))' "$before" "$after")
check "listing: one inspect on master 0 (it lists both), two on the others (LB read by name) ($calls)" test "$calls" = "1 2 2"
r "${TO[@]}" status --match 'L[AB]'
check "listing text: LA and LB rows, each master's view of LB under the table" bash -c 'grep -qE "^LA +rlock " <<<"$1" && grep -qE "^LB +free " <<<"$1" && grep -q "^LB: not held by a majority on 1 of 3 masters" <<<"$1"' _ "$OUT"
echo "$OUT" | sed 's/^/  | /'
r "${TO[@]}" release LA --owner lown
del_on LB

# ------------------------------------------------------------------ fencing
prev=0; ok=1; back=1; fences=
for k in 1 2 3 4 5; do
  r "${TO[@]}" --json acquire FN --ttl 30s
  [ "$RC" = 0 ] || { ok=0; break; }
  f=$(jg "$OUT" fence); fences+=" $f"
  gt "$f" "$prev" || ok=0
  for i in $(granted_indices "$OUT"); do [ "$(fence_on "$i" FN)" = "$f" ] || back=0; done
  prev=$f
  r "${TO[@]}" release FN --owner "$(jg "$OUT" owner)"
done
echo "  fences:$fences"
check "5 acquisitions: strictly increasing fences" test "$ok" = 1
check "5 acquisitions: each granting node's counter equals the fence" test "$back$ok" = 11
restart_master_empty 0
r "${TO[@]}" --json acquire FN --ttl 30s
f=$(jg "$OUT" fence)
check "node 0 restarted empty: the next fence is higher ($prev -> $f)" gt "$f" "$prev"
check "node 0 restarted empty: granted on all 3 ($(granted_indices "$OUT"))" test "$(granted_indices "$OUT")" = "0 1 2 "
check "node 0 restarted empty: its counter is the fence again ($(fence_on 0 FN))" same "$f" "$(fence_on 0 FN)" "$f"
r "${TO[@]}" release FN --owner "$(jg "$OUT" owner)"
prev=$f
restart_master_empty 1; restart_master_empty 2
r "${TO[@]}" --json acquire FN --ttl 30s
f=$(jg "$OUT" fence)
check "nodes 1 and 2 restarted empty: the next fence is higher ($prev -> $f)" gt "$f" "$prev"
r "${TO[@]}" release FN --owner "$(jg "$OUT" owner)"

# skewed counters: the token exceeds every granting node's counter, and is
# written back to each of them
set_counters Z 9000000000000 100 5000000000000
r "${TO[@]}" --json acquire Z --ttl 30s
expect_rc 0 "skewed counters (9e12, 100, 5e12): acquire Z"
f=$(jg "$OUT" fence); g=$(granted_indices "$OUT"); OWNZ=$(jg "$OUT" owner)
check "skewed: the fence ($f) exceeds every granting node's counter (granted: $g)" gt "$f" 9000000000000
back=1; for i in $g; do [ "$(fence_on "$i" Z)" = "$f" ] || back=0; done
check "skewed: each granting node's counter now equals the fence ($(fence_on 0 Z) $(fence_on 1 Z) $(fence_on 2 Z))" test "$back" = 1 -a -n "$g"
metaf=$(for i in $g; do mcli "$i" HGET Z rlock:meta | python3 -c 'import json,sys; print(json.load(sys.stdin).get("fence"))' 2>/dev/null || echo none; done | paste -sd' ')
check "skewed: the holder record (rlock:meta) on each granting node names the fence ($metaf)" \
  same "$f" "$metaf" "$(for i in $g; do echo "$f"; done | paste -sd' ')"
r "${TO[@]}" status Z
check "skewed: status Z shows one fence, $f, for every node" eval '[ "$(grep -o "fence [0-9]*" <<<"$OUT" | sort -u)" = "fence $f" ]'
r "${TO[@]}" release Z --owner "$OWNZ"
prev=$f
r "${TO[@]}" --json acquire Z --ttl 30s
f=$(jg "$OUT" fence)
check "skewed: the next fence is higher still ($prev -> $f)" gt "$f" "$prev"
r "${TO[@]}" release Z --owner "$(jg "$OUT" owner)"
# the largest counter sits on a node that does not grant (held by another)
set_counters Z2 9000000000000 100 200
foreign_lock 0 Z2 other:1 30000
r "${TO[@]}" --json acquire Z2 --ttl 30s
expect_rc 0 "skewed, largest counter on a busy node: acquire Z2 (2 of 3)"
f=$(jg "$OUT" fence); g=$(granted_indices "$OUT")
check "skewed/busy: granted by 1 and 2 ($g)" test "$g" = "1 2 "
check "skewed/busy: the fence ($f) exceeds both granting counters (100, 200)" gt "$f" 200
check "skewed/busy: written back to 1 and 2 ($(fence_on 1 Z2) $(fence_on 2 Z2))" same "$f" "$(fence_on 1 Z2) $(fence_on 2 Z2)" "$f $f"
r "${TO[@]}" release Z2 --owner "$(jg "$OUT" owner)"
mcli 0 DEL Z2 >/dev/null
prev=$f
r "${TO[@]}" --json acquire Z2 --ttl 30s
f=$(jg "$OUT" fence)
check "skewed/busy: once node 0 grants too, the fence passes its counter ($prev -> $f > 9e12)" gt "$f" 9000000000000
r "${TO[@]}" release Z2 --owner "$(jg "$OUT" owner)"

finish
