#!/usr/bin/env bash
# The Redis-side cost of rlock's scripts (issue 23: history is appended inside
# them): CYCLES uncontended `rlock run NAME -- true` cycles (2 EVALSHA each:
# acquire, release) against a fresh redis-server, then INFO commandstats'
# usec_per_call for evalsha. Usage: bench/history_cost.sh [RLOCK_BIN] [CYCLES]
# Prints one line: "<bin> evalsha calls=N usec_per_call=X stream_len=L".
set -eu
bin=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/rlock}
cycles=${2:-2000}
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize yes \
  --pidfile "$dir/pid" >/dev/null
trap 'kill "$(cat "$dir/pid")" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url=redis://127.0.0.1:$port
"$bin" -u "$url" run bench-cost -- true # loads the scripts
redis-cli -p "$port" config resetstat >/dev/null
for _ in $(seq "$cycles"); do
  "$bin" -u "$url" run bench-cost -- true
done
stats=$(redis-cli -p "$port" info commandstats | tr -d '\r' | grep '^cmdstat_evalsha:')
len=$(redis-cli -p "$port" xlen 'rlock_log:{bench-cost}' 2>/dev/null || echo 0)
calls=$(sed -n "s/^cmdstat_evalsha:calls=\([0-9]*\).*/\1/p" <<<"$stats")
usec=$(sed -n 's/.*usec_per_call=\([0-9.]*\).*/\1/p' <<<"$stats")
echo "$bin evalsha calls=$calls usec_per_call=$usec stream_len=$len"
