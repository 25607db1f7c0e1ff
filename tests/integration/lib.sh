# Shared prologue of the integration scenarios: sourced by every test_*.sh.
# Starts a throwaway redis-server on a free loopback port, points rlock at it,
# and cleans everything up on exit. Scenarios use `check`/`expect_rc` and end
# with `finish`, which prints "N passed, 0 failed" and sets the exit status.
set -u

RLOCK=${RLOCK_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/rlock}
[ -x "$RLOCK" ] || { echo "FAIL: rlock binary not found at $RLOCK (set RLOCK_BIN)"; exit 1; }
# The scripts exactly as the binary sends them: the build assembles each lua/*.lua
# (its `-- @include` lines replaced by lua/lib/ files) into lua/ next to the binary
# (RLOCK_LUA names that directory for a binary elsewhere: an installed package's).
RLOCK_LUA=${RLOCK_LUA:-$(dirname "$RLOCK")/lua}
# RLOCK_EMULATOR: set when rlock is another machine's program, run by this
# emulator (binfmt_misc's interpreter; ./dev test --arch arm64): see runs_program.
RLOCK_EMULATOR=${RLOCK_EMULATOR:-}
# RLOCK_NO_SUBREAPER: set by tests/arm64/check.sh where that emulator refuses
# PR_SET_CHILD_SUBREAPER (Debian 12's qemu-user 7.2): what only a subreaper
# gives (a process orphaned in CMD's tree stays below rlock) does not hold there
# (docs/run.md); scenarios say which checks they leave out for it.
RLOCK_NO_SUBREAPER=${RLOCK_NO_SUBREAPER:-}
command -v redis-cli >/dev/null || { echo "FAIL: redis-cli is not installed"; exit 1; }
# The server start_redis starts (RLOCK_TEST_SERVER): redis7, this host's
# redis-server (Debian 12's Redis 7.0, the default); redis8 or valkey8, Debian
# 13's Redis 8.0 or Valkey 8.1 from the trixie root (distros.sh; root only;
# RLOCK_TEST_SERVER_ROOT names the root, else it is found or built). Started as
# REDIS_SERVER_CMD, with the same arguments; start_redis checks that the server
# that answers is the one asked for (SERVER_NAME, SERVER_VERSION).
case "${RLOCK_TEST_SERVER:=redis7}" in
  redis7)
    command -v redis-server >/dev/null || { echo "FAIL: redis-server is not installed"; exit 1; }
    REDIS_SERVER_CMD=(redis-server) SERVER_NAME=redis SERVER_MAJOR=7 ;;
  redis8 | valkey8)
    if [ -z "${RLOCK_TEST_SERVER_ROOT:-}" ]; then
      . "$(dirname "${BASH_SOURCE[0]}")/distros.sh"
      RLOCK_TEST_SERVER_ROOT=$(distro_root trixie) ||
        { echo "FAIL: RLOCK_TEST_SERVER=$RLOCK_TEST_SERVER needs the trixie root, which cannot be built here"; exit 1; }
    fi
    SERVER_NAME=${RLOCK_TEST_SERVER%8} SERVER_MAJOR=8
    mapfile -t REDIS_SERVER_CMD < <(. "$(dirname "${BASH_SOURCE[0]}")/distros.sh"
      distro_server_cmd "$RLOCK_TEST_SERVER_ROOT" "$SERVER_NAME-server")
    [ ${#REDIS_SERVER_CMD[@]} -gt 0 ] || { echo "FAIL: no $SERVER_NAME-server in $RLOCK_TEST_SERVER_ROOT"; exit 1; } ;;
  *) echo "FAIL: RLOCK_TEST_SERVER is redis7, redis8 or valkey8, not '$RLOCK_TEST_SERVER'"; exit 1 ;;
esac

# The Python interpreter, resolved once: `python3` on PATH may be a version
# manager's shim that costs a second or more per start on a busy machine. Its
# directory goes first on PATH too, so `#!/usr/bin/env python3` helpers and every
# `python3` below run the interpreter itself. (Scenarios call it as "$PY".)
if [ -z "${PY:-}" ] || [ ! -x "$PY" ]; then
  PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
  [ -x "$PY" ] || { echo "FAIL: python3 is not installed"; exit 1; }
fi
export PY
case ":$PATH:" in *":${PY%/*}:"*) ;; *) export PATH="${PY%/*}:$PATH" ;; esac

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rlock-test.XXXXXX")
_pids=()
_passed=0
_failed=0

# our_jobs: the pids of this shell's background jobs that have not ended
# (stopped ones too), space-separated with a space at each end. Only those are
# killed by pid: a pid kept from a process that ended may have gone to another
# test's process since (pid_max is 32768 on the CI machine, and a suite starts
# tens of thousands of processes); a SIGKILL to it once ended a test running
# beside this one without a word (CI, 2026-11-29: test_core_wake_matrix).
our_jobs() { echo " $(jobs -rp | tr '\n' ' ') "; }

cleanup() {
  local pid ours
  exec 2>/dev/null # no "Killed" notices for the processes stopped below
  ours=$(our_jobs)
  for pid in "${_pids[@]}"; do
    [[ $ours == *" $pid "* ]] && kill -9 "$pid" 2>/dev/null
  done
  # Every server of this test runs in a directory under TEST_TMP.
  for pid in $(pgrep -x redis-server; pgrep -f "^${REDIS_SERVER_CMD[0]} "); do
    [[ $(readlink "/proc/$pid/cwd" 2>/dev/null) == "$TEST_TMP"/* ]] && kill -9 "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

# runs_program PID FILE: whether PID runs the program FILE (a grep -x pattern
# for the path /proc/PID/exe names). Under RLOCK_EMULATOR that is the emulator,
# which maps the program it runs (and a dynamic one's libraries): FILE must be
# one of the files it maps.
runs_program() {
  local exe
  exe=$(readlink "/proc/$1/exe") || return 1
  if [ -n "$RLOCK_EMULATOR" ] && [ "$exe" = "$RLOCK_EMULATOR" ]; then
    awk 'NF >= 6 { file = $6; for (i = 7; i <= NF; i++) file = file " " $i; print file }' "/proc/$1/maps" |
      grep -qx -- "$2"
  else
    grep -qx -- "$2" <<<"$exe"
  fi
}
export -f runs_program
export RLOCK_EMULATOR RLOCK_NO_SUBREAPER

# A TCP port nobody listens on (the kernel picks it).
free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_redis [extra redis-server args...]: sets REDIS_PORT, REDIS_PID, RLOCK_URL.
# start_redis_on PORT [args...]: the same on a given port (a restart). Kept for
# restarts: REDIS_EXTRA_ARGS (more arguments) and REDIS_PRELOAD_ENV (NAME=VALUE
# environment of the server, e.g. an LD_PRELOAD).
REDIS_EXTRA_ARGS=()
REDIS_PRELOAD_ENV=()
start_redis() { start_redis_on "$(free_port)" "$@"; }
start_redis_on() {
  REDIS_PORT=$1; shift
  local dir="$TEST_TMP/redis-$REDIS_PORT"
  mkdir -p "$dir"
  env "${REDIS_PRELOAD_ENV[@]}" "${REDIS_SERVER_CMD[@]}" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$dir" --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
    "${REDIS_EXTRA_ARGS[@]}" "$@" >>"$dir/log" 2>&1 &
  REDIS_PID=$!
  _pids+=("$REDIS_PID")
  REDIS_SOCK="$dir/redis.sock"
  local i
  for i in $(seq 1 200); do
    if rcli PING 2>/dev/null | grep -q PONG; then
      export RLOCK_URL="redis://127.0.0.1:$REDIS_PORT"
      server_is_asked_for || exit 1
      return 0
    fi
    sleep 0.025
  done
  echo "FAIL: redis-server did not start on port $REDIS_PORT"; tail -5 "$dir/log"; exit 1
}

# The server at REDIS_PORT names itself as RLOCK_TEST_SERVER asks (INFO server:
# Valkey's server_name and valkey_version, else redis_version).
server_is_asked_for() {
  local info name version
  info=$(rcli INFO server | tr -d '\r')
  name=$(sed -n 's/^server_name://p' <<<"$info")
  name=${name:-redis}
  version=$(sed -n "s/^${name}_version://p" <<<"$info")
  if [ "$name" != "$SERVER_NAME" ] || [ "${version%%.*}" != "$SERVER_MAJOR" ]; then
    echo "FAIL: RLOCK_TEST_SERVER=$RLOCK_TEST_SERVER, but the server says it is $name $version"
    return 1
  fi
  SERVER_VERSION=$version
}

stop_redis() {
  kill -9 "$REDIS_PID" 2>/dev/null
  wait "$REDIS_PID" 2>/dev/null
}

# redis-cli against the test server (with REDIS_AUTH_ARGS if set).
rcli() {
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ${REDIS_AUTH_ARGS:-} "$@"
}

# Run rlock with captured stdout/stderr/rc: sets OUT, ERR, RC.
r() {
  "$RLOCK" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
  RC=$?
  OUT=$(cat "$TEST_TMP/out")
  ERR=$(cat "$TEST_TMP/err")
}

pass() { _passed=$((_passed + 1)); echo "ok: $*"; }
fail() { _failed=$((_failed + 1)); echo "FAIL: $*"; echo "  rc=${RC:-} out=${OUT:-} err=${ERR:-}"; }

# check "description" COMMAND...: passes when COMMAND succeeds.
check() {
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# expect_rc N "description": checks the last r's exit status.
expect_rc() {
  if [ "$RC" = "$1" ]; then pass "$2 (rc $1)"; else fail "$2: expected rc $1, got $RC"; fi
}

# JSON output: is_json TEXT; jget TEXT PATH (dotted, numbers index arrays).
is_json() { "$PY" -c 'import json,sys; json.load(sys.stdin)' <<<"$1" 2>/dev/null; }
jget() { "$PY" -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[int(k)] if k.isdigit() else d[k]
print(json.dumps(d) if not isinstance(d,str) else d)' "$2" <<<"$1"; }
# The last r printed exactly one error line.
one_err_line() { [[ $ERR == "rlock: "* ]] && [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ]; }

# Monotonic milliseconds.
now_ms() { "$PY" -c 'import time; print(int(time.monotonic()*1000))'; }
# Wall-clock milliseconds without a fork.
ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# SLACK_MS: what a loaded machine (a shared runner, a laptop, ./dev test --busy)
# may add to starting a process and waking a timer. A bound that is about how
# long something takes is the product's own number plus SLACK_MS, and says so;
# the idle figures are bench/run --only reaction's. A bound never stands in for
# a promise: those are asserted as orders of events.
SLACK_MS=2000
# server_ms: the server's clock (TIME) in ms.
server_ms() { local t; t=($(rcli TIME)); echo $(( t[0] * 1000 + 10#${t[1]} / 1000 )); }
# lease_end_ms KEY: the server's time (ms) at which KEY's lease ends (TIME and
# PTTL read in one script).
lease_end_ms() {
  local a
  a=($(rcli EVAL "local t = redis.call('TIME'); return {redis.call('PTTL', KEYS[1]), t[1], t[2]}" 1 "$1"))
  echo $(( a[1] * 1000 + 10#${a[2]} / 1000 + a[0] ))
}
# acquired_at_ms KEY: when KEY's holder took it, by the server's clock (its record).
acquired_at_ms() { jget "$(rcli HGET "$1" rlock:meta)" acquired_at_ms; }

# alive PID: the process exists and is not a zombie.
alive() {
  local st
  [ -n "${1:-}" ] || return 1
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
dead() { ! alive "$1"; }
# procs_with_env NAME=VALUE: the live processes whose environment holds exactly
# that entry (a marker a scenario puts on everything it starts).
procs_with_env() {
  local f pid
  for f in $(grep -lzxF "$1" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/environ}
    alive "$pid" && echo "$pid"
  done
}
# dead_all PID...: none of them is alive.
dead_all() { local p; for p in "$@"; do alive "$p" && return 1; done; return 0; }
has_file() { [ -s "$1" ]; }
key_gone() { [ "$(rcli EXISTS "$1")" = 0 ]; }
key_there() { [ "$(rcli EXISTS "$1")" = 1 ]; }
# numsub NAME: the waiters subscribed for NAME: on its release channel, or on
# their own (redisson_lock__channel:{NAME}:OWNER, a fair waiter's or a plain
# one's waiting for its turn, lua/lib/turns.lua; not the turns channel
# ...:rlock:turns), whichever counts more (a waiter may listen on both)
numsub() {
  local main own
  main=$(rcli PUBSUB NUMSUB "redisson_lock__channel:{$1}" | sed -n 2p)
  own=$(rcli PUBSUB CHANNELS "redisson_lock__channel:{$1}:*" | grep -v ':rlock:turns$' | grep -c .)
  echo $(( main > own ? main : own ))
}
has_sub() { [ "$(numsub "$1")" -ge 1 ]; }
no_sub() { [ "$(numsub "$1")" = 0 ]; }
# chan_subs CHANNEL: how many subscribe to CHANNEL (has_chan_sub: at least one).
chan_subs() { rcli PUBSUB NUMSUB "$1" | sed -n 2p; }
has_chan_sub() { [ "$(chan_subs "$1")" -ge 1 ]; }
# subscribe CHANNEL FILE: redis-cli SUBSCRIBE in the background (pid in SUBPID),
# writing what it receives to FILE; returns once it is subscribed.
subscribe() {
  rcli SUBSCRIBE "$1" >"$2" 2>&1 &
  SUBPID=$!
  _pids+=("$SUBPID")
  # Its own confirmation ("subscribe CHANNEL 1"), not PUBSUB NUMSUB: a waiter
  # may be subscribed to the same channel already.
  wait_until 5 grep -qx subscribe "$2"
}
# got_msg FILE CHANNEL [MESSAGE [N]]: at least N (default 1) "message CHANNEL
# MESSAGE" triples (MESSAGE default '0') arrived in FILE; no_msg FILE: none did.
got_msg() {
  awk -v c="$2" -v m="${3:-0}" -v want="${4:-1}" '
    { l[NR] = $0 }
    END { for (i = 1; i + 2 <= NR; i++) if (l[i] == "message" && l[i + 1] == c && l[i + 2] == m) n++
          exit !(n >= want) }' "$1"
}
no_msg() { ! grep -q '^message$' "$1"; }

# --- sampling Redis while a command runs --------------------------------------
CHAOSTOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")/../chaos" && pwd)/chaostool.py
# sampler_start OUT STOP CMD...: one long-lived sampler (chaostool.py sample)
# sends CMD to the test server every 50ms until the file STOP exists (60s at
# most), each line "<sent ms> <replied ms> <reply>" (wall clock).
sampler_start() {
  local out=$1 stop=$2; shift 2
  env "${BG_BASE_ENV[@]}" "$PY" "$CHAOSTOOL" sample "$REDIS_PORT" "$out" --every 0.05 --seconds 60 --stop "$stop" -- "$@" &
  _pids+=($!)
}
# samples_within OUT FROM TO: the replies of the samples the server ran inside
# [FROM, TO] (wall ms): sent after FROM and answered before TO.
samples_within() { awk -v a="$2" -v b="$3" '$1 >= a && $2 <= b { print $3 }' "$1"; }
# STAMPED: a command for `rlock run ... -- sh -c "$STAMPED" FILE SECONDS` that
# writes its start and end (wall ms, by the real clock even under a clock shim)
# to FILE.start and FILE.end around a sleep of SECONDS.
STAMPED='env -u LD_PRELOAD date +%s%3N >"$0.start"; sleep "$1"; env -u LD_PRELOAD date +%s%3N >"$0.end"'

# deathwatch PID OUT: records PID's death (wall ms, through a pidfd: no polling)
# in OUT, in the background; returns once it watches (OUT.ready), so a death
# right after it is timed (-1 in OUT: PID was gone before it was watched).
deathwatch() {
  rm -f "$2.ready"
  "$PY" "$CHAOSTOOL" deathwatch "$2" "$1" --timeout 60 &
  _pids+=($!)
  wait_until 10 eval "[ -e '$2.ready' ] || [ -e '$2' ]"
}
# lease_floor SAMPLES UNTIL: from a sampler of `PTTL KEY`, the latest time (wall
# ms) the key's lease is proven to have lasted: a sample sent at S that read P
# (> 0) proves the lease ran until at least S + P. Only samples answered before
# UNTIL count.
lease_floor() { awk -v u="$2" '$2 <= u && $3 > 0 && $1 + $3 > m { m = $1 + $3 } END { printf "%.0f\n", m }' "$1"; }

# bg F ARGS...: runs `rlock ARGS...` in the background (signal dispositions
# reset to default, as from an interactive shell), with BG_BASE_ENV and BG_ENV
# (arrays of NAME=VALUE) added to its environment. Writes F.pid (rlock's pid),
# F.out, F.err, and at exit F.rc and F.t (wall ms). Sets BG_PID.
BG_BASE_ENV=()
BG_ENV=()
bg() {
  local f=$1; shift
  rm -f "$f.pid" "$f.rc" "$f.t" "$f.out" "$f.err"
  (
    env --default-signal "${BG_BASE_ENV[@]}" "${BG_ENV[@]}" "$RLOCK" "$@" >"$f.out" 2>"$f.err" </dev/null &
    echo $! >"$f.pid"
    wait $!
    echo $? >"$f.rc.tmp"
    ms >"$f.t"
    mv "$f.rc.tmp" "$f.rc"
  ) 2>/dev/null &
  _pids+=($!)
  local i
  for i in $(seq 1 200); do
    [ -s "$f.pid" ] && break
    sleep 0.01
  done
  BG_PID=$(cat "$f.pid")
}
bg_done() { [ -s "$1.rc" ]; }
bg_rc() { cat "$1.rc" 2>/dev/null || echo none; }
bg_t() { cat "$1.t" 2>/dev/null || echo 0; }

# --- the TCP proxy (tests/chaos/proxy.py): delays, silences, drops ----------
RLOCK_PROXY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../chaos" && pwd)/proxy.py
# proxy_start [PORT]: a proxy (mode pass) to the server on loopback PORT (default:
# the current Redis); sets PROXY_PORT, PROXY_URL, PROXY_CTL.
proxy_start() {
  PROXY_CTL=$TEST_TMP/proxy.ctl
  echo pass >"$PROXY_CTL"
  rm -f "$TEST_TMP/proxy.port"
  python3 "$RLOCK_PROXY" --target-port "${1:-$REDIS_PORT}" --port-file "$TEST_TMP/proxy.port" \
    --ctl "$PROXY_CTL" --log "$TEST_TMP/proxy.log" --max-seconds 600 &
  PROXY_PID=$!
  _pids+=("$PROXY_PID")
  echo "$PROXY_PID" >>"$TEST_TMP/proxy.pid"
  wait_until 5 has_file "$TEST_TMP/proxy.port" || { echo "FAIL: the proxy did not start"; exit 1; }
  PROXY_PORT=$(cat "$TEST_TMP/proxy.port")
  PROXY_URL="redis://127.0.0.1:$PROXY_PORT"
}
# proxy_mode MODE [MS]: pass | silent | blackhole | drop | delay MS | delay-up MS | delay-down MS
proxy_mode() {
  echo "$*" >"$PROXY_CTL.tmp" && mv "$PROXY_CTL.tmp" "$PROXY_CTL"
  sleep 0.04 # the proxy reads its control file every 20ms
}

# wait_until SECONDS COMMAND...: polls (every 50ms) until COMMAND succeeds.
wait_until() {
  local limit=$1; shift
  local end=$(( $(ms) + limit * 1000 ))
  while [ "$(ms)" -lt $end ]; do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}

finish() {
  echo "$_passed passed, $_failed failed"
  [ "$_failed" -eq 0 ]
  exit $?
}
