#!/usr/bin/env bash
# Steady state: one round trip (one EVALSHA) per acquire, renew and release. Each
# new connection also says HELLO 2 (to learn the server's version and whether it
# is a Cluster), in the same write as its first request: a command, not a round trip.
# acquire, run and renew also ask INFO replication in that write (issue 24: how many
# replicas the primary has, for the default replica sync): a command, not a round
# trip; a server without replicas gets no WAIT. With --sync-replicas given (0 or N),
# no INFO.
# INFO commandstats counts EVALSHA calls (Redis 7 also counts the commands a script
# runs, so those are allowed when the scripts in lua/ call them); MONITOR shows what the
# client itself sent (script-internal commands are tagged [N lua] there).
. "$(dirname "$0")/lib.sh"
start_redis

# warm-up: the scripts get loaded (NOSCRIPT + SCRIPT LOAD) here, not below
r acquire warm --owner w; r renew warm --owner w; r release warm --owner w
r acquire warm2 --owner w; r acquire warm2 -n; r release warm2 --owner w

# commands the scripts may run themselves
SCRIPT_CMDS=$(grep -ohE "redis.p?call\('[A-Za-z]*'" "$RLOCK_LUA"/*.lua | sed -E "s/redis.p?call\('//; s/'//" | tr 'A-Z' 'a-z' | sort -u)
SCRIPT_CMDS="$SCRIPT_CMDS publish spublish"   # the channel command travels as ARGV
stats() { rcli INFO commandstats | tr -d '\r' | grep '^cmdstat_'; }
calls_of() { grep "^cmdstat_$1:" <<<"$2" | sed 's/^[^:]*:calls=\([0-9]*\),.*/\1/'; }
# commands in the stats that are neither EVALSHA, our CONFIG/INFO, nor run by the scripts
unexpected() {
  local line cmd
  while IFS= read -r line; do
    cmd=${line%%:*}; cmd=${cmd#cmdstat_}
    case $cmd in evalsha|info|config|config\|*) continue ;; esac
    [ "$cmd" = hello ] && [ "$(calls_of hello "$2")" -le "$3" ] && continue # one per rlock at most
    grep -qx "$cmd" <<<"$(tr ' ' '\n' <<<"$SCRIPT_CMDS")" || echo "$line"
  done <<<"$2"
}

measure() { # DESCRIPTION EXPECTED_EVALSHA -- rlock invocations separated by ';;'
  local what=$1 want=$2; shift 3
  rcli CONFIG RESETSTAT >/dev/null
  local args=()
  for a in "$@" ';;'; do
    if [ "$a" = ';;' ]; then r "${args[@]}"; args=(); else args+=("$a"); fi
  done
  local S ev extra
  local runs; runs=$(grep -o ';;' <<<"$* ;;" | wc -l)
  S=$(stats); ev=$(calls_of evalsha "$S"); extra=$(unexpected x "$S" "$runs")
  echo "  $what: cmdstat_evalsha calls=${ev:-0}"
  echo "$S" | sed 's/,usec=.*//; s/^/    | /'
  check "$what: cmdstat_evalsha calls=$want" test "${ev:-0}" = "$want"
  check "$what: no command outside EVALSHA and its scripts (${extra:-none})" test -z "$extra"
}

measure "uncontended acquire + release" 2 -- acquire RT --owner o ';;' release RT --owner o
check "RT released" test "$(rcli EXISTS RT)" = 0
measure "acquire + renew" 2 -- acquire RT2 --owner o ';;' renew RT2 --owner o --ttl 40s
measure "re-entry" 1 -- acquire RT2 --owner o
r acquire RT4 --owner a
measure "contended acquire -n" 1 -- acquire RT4 -n

# --- the same through MONITOR: only EVALSHA from the client, nothing for the connection
# monitored CMD...: runs CMD with MONITOR on; MON: what the server saw meanwhile
# (redis-cli itself in the background, not rcli's subshell: killed, it is gone;
# each call its own file, a marker of its own)
monitors=0
monitored() {
  monitors=$((monitors + 1))
  local file=$TEST_TMP/monitor.$monitors
  # shellcheck disable=SC2086
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ${REDIS_AUTH_ARGS:-} MONITOR >"$file" 2>&1 &
  local mon=$!
  _pids+=("$mon")
  mon_ready() { [ "$(rcli CLIENT LIST | grep -c 'cmd=monitor')" -ge 1 ]; }
  wait_until 5 mon_ready
  rcli ECHO "start-marker-$monitors" >/dev/null
  "$@"
  rcli ECHO "end-marker-$monitors" >/dev/null
  seen_end() { grep -aq "end-marker-$monitors" "$file"; }
  wait_until 3 seen_end
  kill "$mon" 2>/dev/null
  wait "$mon" 2>/dev/null
  MON=$(sed -n "/start-marker-$monitors/,/end-marker-$monitors/p" "$file" | grep -av marker)
}
cycle() { r acquire RT3 --owner o; r release RT3 --owner o; }
monitored cycle
client_cmds=$(grep -av ' lua\] ' <<<"$MON" | awk '{print toupper($4)}' | tr -d '"' | tr '\n' ' ')
lua_cmds=$(grep -ac ' lua\] ' <<<"$MON")
echo "  MONITOR: client commands for acquire+release: ${client_cmds:-none}(script-internal: $lua_cmds)"
# (TIME: the server's clock for the deadline each change carries, issue 34; in
# the first request's write, as HELLO: no round trip of its own)
check "MONITOR: the client sent exactly HELLO INFO TIME EVALSHA HELLO TIME EVALSHA (no WAIT: no replicas)" \
  test "$client_cmds" = "HELLO INFO TIME EVALSHA HELLO TIME EVALSHA "
# An acquisition of a free lock reads the history back to end holds that went
# unseen; after an exclusive hold's release (which says its mode, issue 45)
# the newest event is enough: one XREVRANGE, COUNT 1.
monitored r acquire RT3 --owner o
# (grep -a: MONITOR's lines may hold bytes grep takes for binary)
reads=$(grep -a ' lua\] ' <<<"$MON" | grep -ac '"XREVRANGE"')
check "after a release, the next acquisition reads one history event ($(grep -a '"XREVRANGE"' <<<"$MON" | cut -d' ' -f4- | tr '\n' ' '))" \
  test "$reads" = 1 -a "$(grep -ac '"XREVRANGE" "rlock_log:{RT3}" "+" "-" "COUNT" "1"' <<<"$MON")" = 1
r release RT3 --owner o

# HELLO and the first request leave in one write: both are sent before any reply is read.
r -v acquire RT5 --owner o
order=$(grep -o '^rlock: [0-9:.]* [<>] [A-Z]*' <<<"$ERR" | head -8 | awk '{print $3 $4}' | tr '\n' ' ')
check "HELLO, INFO and TIME ride with the first request: sent HELLO, INFO, TIME, EVALSHA, then read four replies ($order)" \
  test "$order" = ">HELLO >INFO >TIME >EVALSHA < < < < "
for off in "--sync-replicas 0" "--sync-replicas 1/100ms"; do
  # shellcheck disable=SC2086
  r -v acquire RT6 --owner o $off
  sent=$(grep -o '^rlock: [0-9:.]* > [A-Z]*' <<<"$ERR" | awk '{print $4}' | tr '\n' ' ')
  check "$off: no INFO asked (sent: $sent)" eval '! grep -qw INFO <<<"$sent"'
done
RLOCK_SYNC_REPLICAS=0 r -v acquire RT6 --owner o
check "RLOCK_SYNC_REPLICAS=0: no INFO asked" eval '! grep -q "^rlock: [0-9:.]* > INFO" <<<"$ERR"'
r release RT6 --owner o --all

finish
