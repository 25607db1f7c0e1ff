#!/usr/bin/env bash
# The Redis-side cost of the history (issue 23) with everything else equal: one
# fresh redis-server, the scripts the build assembled (build/lua), CYCLES
# acquire + release pairs sent through redis-cli, alternately without the log
# key (the scripts then write no event) and with it, ROUNDS times; INFO
# commandstats' usec_per_call for evalsha each time.
# Usage: bench/history_ab.sh [LUA_DIR] [CYCLES] [ROUNDS]
set -eu
lua=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/lua}
cycles=${2:-2000}
rounds=${3:-4}
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize yes \
  --pidfile "$dir/pid" >/dev/null
trap 'kill "$(cat "$dir/pid")" 2>/dev/null; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 50); do cli ping >/dev/null 2>&1 && break; sleep 0.1; done
acq=$(cli -x SCRIPT LOAD <"$lua/acquire.lua")
rel=$(cli -x SCRIPT LOAD <"$lua/release.lua")
ctx='[1000,2592000000,"host","vm","pid","12345","cmd","bash /srv/deploy.sh --prod","ver","0.1.0","mode","exclusive","waited_ms","3"]'
n=n
common="redisson_lock_queue:{$n} redisson_lock_timeout:{$n} rlock_waiters:{$n}"
for mode in plain history; do
  for i in $(seq "$cycles"); do
    if [ $mode = history ]; then
      echo "EVALSHA $acq 7 $n redisson_lock_token:{$n} rlock_acquire_latch:{$n}:a$i $common rlock_log:{$n} t$i 30000 1 24000 vm 12345 x 0.1.0 boot 123 1 '$ctx'"
      echo "EVALSHA $rel 7 $n redisson_lock__channel:{$n} redisson_unlock_latch:{$n}:r$i $common rlock_log:{$n} t$i 0 PUBLISH 24000 1 '$ctx'"
    else
      echo "EVALSHA $acq 6 $n redisson_lock_token:{$n} rlock_acquire_latch:{$n}:a$i $common t$i 30000 1 24000 vm 12345 x 0.1.0 boot 123 1"
      echo "EVALSHA $rel 6 $n redisson_lock__channel:{$n} redisson_unlock_latch:{$n}:r$i $common t$i 0 PUBLISH 24000 1"
    fi
  done >"$dir/$mode.txt"
done
for round in $(seq "$rounds"); do
  for mode in plain history; do
    cli FLUSHALL >/dev/null
    cli CONFIG RESETSTAT >/dev/null
    cli <"$dir/$mode.txt" >"$dir/out.txt"
    usec=$(cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')
    echo "round $round $mode: evalsha usec_per_call=$usec events=$(cli XLEN "rlock_log:{$n}")"
  done
done
