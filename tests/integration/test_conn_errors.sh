#!/usr/bin/env bash
# Redis unavailable -> 69: refused connection, --connect-timeout, --io-timeout.
. "$(dirname "$0")/lib.sh"
start_redis --enable-debug-command local


# --- nobody listens on the port
port=$(free_port)
for cmd in "acquire U" "release U --owner o" "renew U --owner o" "status U" "status" "force-unlock U"; do
  t0=$(ms)
  # shellcheck disable=SC2086
  r -u "redis://127.0.0.1:$port" $cmd
  d=$(( $(ms) - t0 ))
  expect_rc 69 "$cmd on an unreachable server"
  check "$cmd: fails within the 2s connect timeout (${d}ms < 2000ms + SLACK_MS)" test "$d" -lt $(( 2000 + SLACK_MS ))
  check "$cmd: the message names the endpoint 127.0.0.1:$port" grep -qF "127.0.0.1:$port" <<<"$ERR"
  check "$cmd: one error line 'rlock: '" one_err_line
done
echo "  e.g. $ERR"
t0=$(ms)
r -u "redis://127.0.0.1:$port" acquire U -w 5s
d=$(( $(ms) - t0 ))
expect_rc 69 "acquire -w 5s on an unreachable server is 69, not a wait"
check "acquire -w 5s on an unreachable server fails within the connect timeout, no wait (${d}ms < 2000ms + SLACK_MS)" test "$d" -lt $(( 2000 + SLACK_MS ))
r -u "redis://127.0.0.1:$port" acquire U --json
expect_rc 69 "acquire --json on an unreachable server"
check "nothing (or valid JSON) on stdout when unreachable" bash -c '[ -z "$1" ] || python3 -c "import json,sys; json.loads(sys.argv[1])" "$1"' _ "$OUT"
RLOCK_URL="redis://127.0.0.1:$port" r acquire U
expect_rc 69 "RLOCK_URL pointing nowhere"
check "the RLOCK_URL endpoint is named" grep -qF "127.0.0.1:$port" <<<"$ERR"
saved=$RLOCK_URL; unset RLOCK_URL
REDIS_URL="redis://127.0.0.1:$port" r acquire U
expect_rc 69 "REDIS_URL used when RLOCK_URL is unset"
check "the REDIS_URL endpoint is named" grep -qF "127.0.0.1:$port" <<<"$ERR"
REDIS_URL="redis://127.0.0.1:$port" RLOCK_URL=$saved r acquire U2
expect_rc 0 "RLOCK_URL wins over REDIS_URL"
export RLOCK_URL=$saved
r -u "unix://$TEST_TMP/nothing.sock" acquire U
expect_rc 69 "a unix socket that does not exist"
check "the socket path is named" grep -qF "$TEST_TMP/nothing.sock" <<<"$ERR"

# --- --connect-timeout honoured: a listener whose accept queue is full never completes the handshake
python3 - "$TEST_TMP/bh.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.2)
open(sys.argv[1], "w").write(str(port))
time.sleep(30)
PY
_pids+=($!)
bh_ready() { [ -s "$TEST_TMP/bh.port" ]; }
wait_until 5 bh_ready
bh=$(cat "$TEST_TMP/bh.port")
t0=$(ms)
r -u "redis://127.0.0.1:$bh" --connect-timeout 300ms acquire U
d=$(( $(ms) - t0 )); echo "  --connect-timeout 300ms on a black hole: rc $RC after ${d}ms: $ERR"
expect_rc 69 "--connect-timeout 300ms on a server that never answers"
check "--connect-timeout 300ms honoured (${d}ms: 250..300 + SLACK_MS)" test "$d" -ge 250 -a "$d" -le $(( 300 + SLACK_MS ))
check "connect timeout message names the endpoint" grep -qF "127.0.0.1:$bh" <<<"$ERR"
t0=$(ms)
r -u "redis://127.0.0.1:$bh" acquire U
d=$(( $(ms) - t0 )); echo "  default connect timeout on a black hole: ${d}ms"
expect_rc 69 "default connect timeout on a server that never answers"
check "default connect timeout is 2s (${d}ms: 1800..2000 + SLACK_MS)" test "$d" -ge 1800 -a "$d" -le $(( 2000 + SLACK_MS ))

# --- --io-timeout: the server is busy (DEBUG SLEEP 6: long enough for two
# timed-out requests on a loaded machine)
r acquire busyname --owner b   # scripts are loaded before the server sleeps
rcli DEBUG SLEEP 6 >/dev/null &
sleeper=$!; _pids+=("$sleeper")
sleep 0.2
t0=$(ms)
r --io-timeout 500ms acquire IO
d=$(( $(ms) - t0 )); echo "  --io-timeout 500ms during DEBUG SLEEP 6: rc $RC after ${d}ms: $ERR"
expect_rc 69 "--io-timeout 500ms while the server sleeps"
check "--io-timeout honoured, not the 6s sleep (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
check "io timeout message names the endpoint" grep -qF "127.0.0.1:$REDIS_PORT" <<<"$ERR"
check "io timeout: one error line" one_err_line
t0=$(ms)
r --io-timeout 500ms release busyname --owner b
d=$(( $(ms) - t0 ))
expect_rc 69 "release with --io-timeout 500ms while the server sleeps"
check "release io timeout honoured (${d}ms < 500ms + SLACK_MS)" test "$d" -lt $(( 500 + SLACK_MS ))
wait "$sleeper"
r status IO
echo "  after the sleep, IO is: $OUT"
r acquire after-sleep
expect_rc 0 "the server answers again after the sleep"

finish
