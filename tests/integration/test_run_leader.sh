#!/usr/bin/env bash
# docs/leader.md's recipe, as written there: two "nodes" (two copies of its
# shell loop, on this machine, against one redis-server) around
# `rlock run -w ... leader -- daemon`. One daemon runs; the standby says off a
# terminal that it waits, and for whom. The leader's rlock SIGKILLed: the
# standby takes over and the old daemon had stopped before the new one started;
# the killed node's loop stands by again. The leading daemon exits by itself:
# the other node takes over. Redis stalls longer than the lease: the leader
# stops its daemon and exits 76; once Redis is back, one node takes over. A SIGTERM to a loop's
# process group ends its rlock, daemon and loop. Every takeover is an order of
# events (the oracle: the new daemon finds the old one's pid dead as it starts),
# never a latency.
. "$(dirname "$0")/lib.sh"
ROOT=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
start_redis
EV=$TEST_TMP/events   # one line per daemon start: "start NODE PID", or "OVERLAP ..."
RCS=$TEST_TMP/rcs     # one line per rlock exit: "NODE RC"

# The daemon: on start, the previous daemon (its pid in $TEST_TMP/current)
# must be gone; then it runs until a signal, or until told to end (a file).
cat >"$TEST_TMP/daemon" <<EOF
#!/bin/sh
prev=\$(cat "$TEST_TMP/current" 2>/dev/null)
if [ -n "\$prev" ] && [ -d "/proc/\$prev" ] && ! grep -q ') [ZX] ' "/proc/\$prev/stat" 2>/dev/null; then
  echo "OVERLAP \$NODE \$\$ while \$prev runs" >>"$EV"
fi
echo \$\$ >"$TEST_TMP/current"
echo "start \$NODE \$\$" >>"$EV"
while [ ! -e "$TEST_TMP/end-\$\$" ]; do sleep 0.1; done
exit 0
EOF
chmod +x "$TEST_TMP/daemon"

# `rlock` on the loops' PATH: the binary under test, each exit noted.
mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/rlock" <<EOF
#!/bin/sh
"$RLOCK" "\$@"
rc=\$?
echo "\$NODE \$rc" >>"$RCS"
exit \$rc
EOF
chmod +x "$TEST_TMP/bin/rlock"

# The loop, cut from docs/leader.md: its URL is this test's server, its daemon
# the one above, its lease 3s (a loss is seen within a second).
loop=$(awk '/^## As a shell loop/ { on = 1 } on && /^```sh$/ { grab = 1; next } grab && /^```$/ { exit } grab' \
  "$ROOT/docs/leader.md")
check "docs/leader.md has the shell loop, with rlock run -w and a case on its exit" \
  eval 'grep -q "rlock run -w 1h --ttl 15s myservice-leader -- /usr/local/bin/myservice" <<<"$loop" &&
        grep -q "case \$? in" <<<"$loop"'
loop=$(sed -e "/^export RLOCK_URL=/d" -e "s|/usr/local/bin/myservice|$TEST_TMP/daemon|" \
  -e "s|--ttl 15s|--ttl 3s|" <<<"$loop")
printf '%s\n' "$loop" >"$TEST_TMP/leader-loop"

# start_node NODE: the loop in a process group of its own (as a service's),
# its stderr in $TEST_TMP/NODE.err; sets its pid in NODE_PID_<NODE>.
start_node() {
  NODE=$1 PATH="$TEST_TMP/bin:$PATH" setsid sh "$TEST_TMP/leader-loop" >"$TEST_TMP/$1.out" 2>"$TEST_TMP/$1.err" </dev/null &
  _pids+=($!)
  eval "NODE_PID_$1=$!"
}
# node_rlock NODE: the pid of the rlock (the binary under test) its loop runs now.
node_rlock() {
  local loop=NODE_PID_$1 wrapper
  for wrapper in $(pgrep -P "${!loop}"); do
    pgrep -P "$wrapper" -f "^$RLOCK run " && return 0
  done
  return 1
}
starts() { grep -c "^start $1 " "$EV" 2>/dev/null || true; }
total_starts() { grep -c "^start " "$EV" 2>/dev/null || echo 0; }
leader() { tail -n 1 "$EV" | awk '{ print $2 }'; }
current() { cat "$TEST_TMP/current"; }
waits_lines() { grep -c "^rlock: waiting up to 1h for \"myservice-leader\"" "$TEST_TMP/$1.err" || true; }

# --- node A leads; node B stands by and says so, off a terminal
start_node A
check "node A's daemon starts" wait_until 10 eval '[ "$(starts A)" = 1 ]'
start_node B
check "node B waits, and its log says for whom (host, pid, since when)" \
  wait_until 10 eval '[ "$(waits_lines B)" -ge 1 ]'
check "B's line names the holder's host and the daemon's command" \
  grep -qE "held by .* on $(hostname) \(pid [0-9]+, \"$TEST_TMP/daemon\"\).*; held since [0-9T:-]+Z$" "$TEST_TMP/B.err"
check "only A's daemon runs" test "$(total_starts)" = 1

# --- A's rlock SIGKILLed: its guardian stops the daemon and releases; B takes over
old=$(current)
rl=$(node_rlock A)
check "A's rlock is found (pid '$rl')" test -n "$rl"
kill -9 "$rl"
check "B's daemon starts after A's rlock is killed" wait_until 15 eval '[ "$(starts B)" = 1 ]'
check "A's old daemon ($old) is gone" dead "$old"
check "no daemon started while the other ran" test "$(grep -c OVERLAP "$EV")" = 0
# (the loop notes an exit once rlock's process has ended, which may come after the
# other node's daemon started: under ASan, exiting takes a while; waited for)
check "A's loop saw its rlock end with 137 (SIGKILL)" wait_until 10 grep -qx "A 137" "$RCS"
check "A stands by again (a second 'waiting' line)" wait_until 10 eval '[ "$(waits_lines A)" -ge 1 ]'

# --- B's daemon ends by itself: B's rlock exits 0, A takes over, B stands by
old=$(current)
touch "$TEST_TMP/end-$old"
check "A's daemon starts after B's ended" wait_until 15 eval '[ "$(starts A)" = 2 ]'
check "B's daemon ($old) is gone" dead "$old"
check "B's loop saw the daemon's status (0)" wait_until 10 grep -qx "B 0" "$RCS"
check "no overlap" test "$(grep -c OVERLAP "$EV")" = 0
check "B stands by again" wait_until 10 eval '[ "$(waits_lines B)" -ge 2 ]'

# --- Redis stalls (SIGSTOP) longer than the lease: the leader cannot renew, so
# its rlock stops the daemon before the lease can end and exits 76; once Redis
# is back, one node takes over (the standby rode the stall out in -w; the old
# leader's loop stood by again).
old=$(current)
kill -STOP "$REDIS_PID"
check "A's loop saw 76 (the lease could not be confirmed) while Redis stalled" wait_until 15 grep -qx "A 76" "$RCS"
check "A's daemon ($old) was stopped while Redis stalled" dead "$old"
check "no daemon started while Redis stalled" test "$(total_starts)" = 3
kill -CONT "$REDIS_PID"
check "a daemon starts once Redis is back" wait_until 20 eval '[ "$(total_starts)" = 4 ]'
check "no overlap" test "$(grep -c OVERLAP "$EV")" = 0
check "exactly one daemon runs ($(current))" alive "$(current)"

# --- a SIGTERM to each loop's process group (what systemd and container
# runtimes send): rlock stops the daemon and releases; nothing is left.
daemon=$(current)
pa=$NODE_PID_A pb=$NODE_PID_B
kill -TERM -- "-$pb" "-$pa"
check "both loops end" wait_until 15 dead_all "$pa" "$pb"
check "the leading daemon ($daemon) is stopped" wait_until 15 dead "$daemon"
check "the lock is released" wait_until 5 key_gone myservice-leader
check "no rlock of the loops is left" wait_until 10 eval '[ -z "$(pgrep -f "^$RLOCK run -w 1h --ttl 3s myservice-leader")" ]'
check "no overlap in the whole run" test "$(grep -c OVERLAP "$EV")" = 0
finish
