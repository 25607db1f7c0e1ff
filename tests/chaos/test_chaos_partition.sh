#!/usr/bin/env bash
# Real partitions between hosts (issue 34): one Redis in a server namespace,
# hosts in namespaces of their own on a private bridge (netns.sh), and the
# network's faults between them: a silent partition (iptables DROP both ways),
# a link down, and a link that holds what is sent and delivers it late, in
# order (netem delay where the kernel has it, else a token bucket that holds
# the packets until it is lifted). Root only, as CI is; without network
# namespaces it fails, it does not skip.
#
# The promise: a request rlock gave up on never takes effect later. Each round:
#   - host B holds a name in each mode (plain, --fair, --write, --limit 1);
#   - on hosts A1..A4 a `run -w 2s` waits for it (one host per mode), on A5 a
#     `run --once-per` whose CMD ends just before a window's end;
#   - then every A host is cut off by the round's fault until all its rlocks
#     have given up and exited, then healed;
#   - after the heal (and time for the kernel's retransmissions), no name is
#     held by a process that is gone, no CMD of A ran, the history has no
#     acquisition by A, the completion record is not in a later window than
#     the one A's CMD ended in, and host C's `run --once-per` in the new window
#     runs its CMD.
# At cea5b2d the lock is held by the dead waiter for its whole lease (and the
# completion is counted for the next window): the bytes sat in the waiter's
# kernel (or on the link) and were delivered when the path came back.
. "$(dirname "$0")/../integration/lib.sh"

NETNS=$(cd "$(dirname "$0")" && pwd)/netns.sh
ROUNDS=${PARTITION_ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "FAIL: test_chaos_partition needs root (network namespaces), as CI has"; exit 1; }
command -v iptables >/dev/null || { echo "FAIL: iptables is not installed (./dev installs it)"; exit 1; }
command -v tc >/dev/null || { echo "FAIL: tc is not installed (iproute2; ./dev installs it)"; exit 1; }

ID=rp$$
LANES=(a1 a2 a3 a4 a5)
netns_down() { "$NETNS" down "$ID"; cleanup; }
trap netns_down EXIT
"$NETNS" up "$ID" hb hc "${LANES[@]}" || { echo "FAIL: cannot make the network namespaces"; exit 1; }
SRV=$("$NETNS" ip "$ID" srv)
URL="redis://$SRV:6379"

mkdir -p "$TEST_TMP/redis"
"$NETNS" exec "$ID" srv redis-server --bind "$SRV" --port 6379 --protected-mode no --save '' --appendonly no \
  --dir "$TEST_TMP/redis" >"$TEST_TMP/redis/log" 2>&1 &
sr() { "$NETNS" exec "$ID" srv redis-cli -h "$SRV" -p 6379 "$@"; }
srv_ms() { local t; t=($(sr TIME)); echo $(( t[0] * 1000 + 10#${t[1]} / 1000 )); }
srv_up() { sr PING 2>/dev/null | grep -q PONG; }
wait_until 10 srv_up || { echo "FAIL: redis-server did not start in the server namespace"; exit 1; }

# on HOST F ARGS...: rlock ARGS in HOST's namespace, in the background; F.pid,
# F.out, F.err, then F.rc.
on() {
  local host=$1 f=$2; shift 2
  rm -f "$f".*
  (
    ip netns exec "$ID-$host" env RLOCK_URL="$URL" "$RLOCK" "$@" >"$f.out" 2>"$f.err" </dev/null &
    echo $! >"$f.pid"
    wait $!
    echo $? >"$f.rc"
  ) &
}
st_held() { ip netns exec "$ID-hc" env RLOCK_URL="$URL" "$RLOCK" status "$@" --json 2>/dev/null |
  "$PY" -c 'import json,sys; print("yes" if json.load(sys.stdin)["locks"][0]["held"] else "no")'; }
all_done() { local f; for f in "$@"; do [ -s "$f.rc" ] || return 1; done; }

# The round's fault on HOST, and its heal.
NETEM=0
"$NETNS" netem "$ID" hc delay 1ms && NETEM=1
"$NETNS" heal "$ID" hc
fault() {
  case $1 in
  drop) "$NETNS" cut "$ID" "$2" ;;
  linkdown) "$NETNS" linkdown "$ID" "$2" ;;
  hold) if [ $NETEM = 1 ]; then "$NETNS" netem "$ID" "$2" delay 12s limit 100000; else "$NETNS" slow "$ID" "$2" 8; fi ;;
  esac
}
heal() {
  # hold: what was held goes out now (netem's delay runs out by itself)
  [ "$1" = hold ] && [ $NETEM = 0 ] && "$NETNS" fast "$ID" "$2"
  [ "$1" = hold ] && [ $NETEM = 1 ] && sleep 6
  "$NETNS" heal "$ID" "$2"
}
echo "# delay: $([ $NETEM = 1 ] && echo 'tc netem' || echo 'no netem in this kernel: a tbf token bucket holds the packets')"

read -r -a FAULTS <<<"${PARTITION_FAULTS:-drop linkdown hold}"
MODES=("" --fair --write "--limit 1")
WAIT_FLAGS=(--io-timeout 1s --connect-timeout 1s ${PARTITION_VERBOSE:+-v})
for round in $(seq 1 "$ROUNDS"); do
  kind=${FAULTS[$(( (round - 1) % ${#FAULTS[@]} ))]}
  echo "# round $round: $kind"
  d=$TEST_TMP/r$round
  mkdir -p "$d"
  # A once-per window that ends about 2 s from now on the server's clock.
  now=$(srv_ms)
  win=20000
  while [ $(( win - now % win )) -lt 1900 ] || [ $(( win - now % win )) -gt 2100 ]; do win=$((win + 1)); done
  boundary=$(( (now / win + 1) * win ))
  # B holds each name, in its mode, for 3 s.
  for i in 0 1 2 3; do
    # shellcheck disable=SC2086
    on hb "$d/b$i" run ${MODES[$i]} "N$round-$i" -- sleep 3
  done
  # (its lease outlives the heal: a record delivered late still finds it held)
  on a5 "$d/a5" "${WAIT_FLAGS[@]}" run --ttl 12s --once-per "${win}ms" "O$round" -- sleep 1.4
  sleep 0.5
  for i in 0 1 2 3; do
    # shellcheck disable=SC2086
    on "a$((i + 1))" "$d/a$((i + 1))" "${WAIT_FLAGS[@]}" run ${MODES[$i]} -w 2s "N$round-$i" -- echo "RAN-A$i"
  done
  sleep 0.5
  for lane in "${LANES[@]}"; do fault "$kind" "$lane"; done
  check "round $round ($kind): every A gave up and exited while cut off" \
    wait_until 30 all_done "$d/a1" "$d/a2" "$d/a3" "$d/a4" "$d/a5"
  sleep 0.3
  for lane in "${LANES[@]}"; do heal "$kind" "$lane"; done
  check "round $round: the holds of B ended" wait_until 10 all_done "$d/b0" "$d/b1" "$d/b2" "$d/b3"
  # Time for what the kernel (or the link) still held to arrive: TCP's
  # retransmission backs off to a few seconds after a cut this long.
  sleep 6
  for i in 0 1 2 3; do
    lane=a$((i + 1))
    mode=${MODES[$i]:-plain}
    # 69: it gave up on a request that got no reply (the one the fault held)
    check "round $round ($kind), $mode: A's waiter gave up on an unanswered request: 69 (got $(cat "$d/$lane.rc"))" \
      grep -qx 69 "$d/$lane.rc"
    check "round $round ($kind), $mode: A's CMD never ran" eval "! grep -q RAN-A $d/$lane.out"
    held=$(st_held "N$round-$i")
    check "round $round ($kind), $mode: after the heal the name is free (held: $held)" test "$held" = no
    check "round $round ($kind), $mode: no acquisition by A's pid in the history" \
      eval "! ip netns exec $ID-hc env RLOCK_URL=$URL $RLOCK history N$round-$i 2>/dev/null | grep -E 'acquired|re-entered' | grep -q 'pid=$(cat "$d/$lane.pid")'"
  done
  late=$(sr INFO errorstats | tr -d '\r' | sed -n 's/^errorstat_LATE:count=//p')
  echo "  requests the server refused as late so far: ${late:-0}"
  if [ "$kind" = hold ]; then
    # What the link held reached the server after A gave up: refused.
    check "round $round ($kind): the held requests arrived and were refused as late" test "${late:-0}" -gt "${late_before:-0}"
  fi
  late_before=${late:-0}
  # The completion: CMD ended before the boundary; its record, if any, is for
  # that window, never a later one.
  rec=$(sr GET "rlock_done:{O$round}")
  start=none
  [ -n "$rec" ] && start=$(jget "$rec" window_start_ms)
  echo "  once-per: window ${win} ms, boundary $boundary, A5 exit $(cat "$d/a5.rc"), record window start: $start"
  check "round $round ($kind): A5's completion is not counted for the window after the one its CMD ended in" \
    test "$start" = none -o "$start" = "$(( boundary - win ))"
  # Host C, reachable, in the new window: its job runs.
  now=$(srv_ms)
  if [ "$now" -lt $(( boundary + win - 1000 )) ]; then
    # (-w: A5's lock runs out first, its release could not get through)
    on hc "$d/c" run -w 10s --once-per "${win}ms" "O$round" -- echo RAN-C
    wait_until 15 all_done "$d/c"
    check "round $round ($kind): C's run in the new window ran its CMD (exit $(cat "$d/c.rc"))" grep -q RAN-C "$d/c.out"
  fi
done

[ -n "${PARTITION_VERBOSE:-}" ] && cp "$d"/a1.err /tmp/rlock-partition-a1.err
echo "# A's stderr, last round:"
sed 's/^/  /' "$d"/a*.err | head -20
finish
