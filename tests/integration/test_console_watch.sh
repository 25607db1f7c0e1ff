#!/usr/bin/env bash
# status --watch: on a terminal (a pseudo-terminal here) it redraws in place
# with the cursor hidden, colours only without NO_COLOR, and ends cleanly
# (exit 0, cursor shown again) on SIGINT; off a terminal it prints one snapshot
# per interval, --json one document per line; a server that goes away is said
# in the frame and the watch goes on.
. "$(dirname "$0")/lib.sh"
start_redis

"$RLOCK" acquire w:one --ttl 60s >/dev/null
"$RLOCK" acquire w:two --ttl 60s >/dev/null

# pty_watch NO_COLOR-value ARGS...: runs rlock ARGS on a pseudo-terminal of
# 30x100 for about 1.2s, sends SIGINT, and prints: the exit status, the time
# from SIGINT to exit in ms, then (after a line "--") everything it wrote.
pty_watch() {
  python3 - "$RLOCK" "$@" <<'PY'
import fcntl, os, pty, select, signal, struct, sys, termios, time
rlock, no_color, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    env = dict(os.environ, TERM="xterm")
    env.pop("COLUMNS", None)
    if no_color:
        env["NO_COLOR"] = no_color
    else:
        env.pop("NO_COLOR", None)
    os.execve(rlock, [rlock] + args, env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
out = b""
def drain(until):
    global out
    while time.monotonic() < until:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            out += data
drain(time.monotonic() + 1.2)
os.kill(pid, signal.SIGINT)
sent = time.monotonic()
status = None
while time.monotonic() < sent + 3:
    drain(time.monotonic() + 0.05)
    time.sleep(0.01)  # drain returns at once once the terminal is closed
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(st)
        break
took = int((time.monotonic() - sent) * 1000)
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    status = "hung"
drain(time.monotonic() + 0.1)
sys.stdout.write("%s\n%d\n--\n" % (status, took))
sys.stdout.write(out.decode("utf-8", "replace"))
PY
}

out=$(pty_watch "" status --watch 200ms)
rc=$(sed -n 1p <<<"$out"); took=$(sed -n 2p <<<"$out"); screen=$(sed '1,3d' <<<"$out")
OUT="rc=$rc took=${took}ms"
check "terminal: SIGINT ends the watch with exit 0 ($rc)" test "$rc" = 0
check "terminal: it ends within 1s of SIGINT (${took}ms)" test "$took" -lt 1000
check "terminal: the cursor is hidden while it draws" grep -qF $'\e[?25l' <<<"$screen"
check "terminal: the cursor is shown again at the end" bash -c '[[ "$1" == *$'"'"'\e[?25h'"'"'* ]] && [[ "${1##*$'"'"'\e[?25h'"'"'}" != *$'"'"'\e[?25l'"'"'* ]]' _ "$screen"
frames=$(grep -o $'\e\\[H' <<<"$screen" | wc -l)
check "terminal: redrawn in place, from the top, several times ($frames frames in 1.2s)" test "$frames" -ge 3
check "terminal: the title says the interval and what it watches" grep -q "every 200ms: rlock status on redis://127.0.0.1:$REDIS_PORT" <<<"$screen"
check "terminal: both locks in the table" bash -c 'grep -q "w:one " <<<"$1" && grep -q "w:two " <<<"$1"' _ "$screen"
check "terminal: a bold header (colour on a terminal)" grep -qF $'\e[1mNAME' <<<"$screen"

out=$(pty_watch 1 status --watch 200ms w:one)
rc=$(sed -n 1p <<<"$out"); took=$(sed -n 2p <<<"$out"); screen=$(sed '1,3d' <<<"$out")
OUT="rc=$rc took=${took}ms: $(head -c 300 <<<"$out" | cat -A)"
check "NO_COLOR=1: exit 0 on SIGINT" test "$rc" = 0
check "NO_COLOR=1: no colour on the terminal" bash -c '! grep -qF $'"'"'\e[1m'"'"' <<<"$1"' _ "$screen"
check "NO_COLOR=1: the named lock, with its details" grep -q '^w:one: held by ' <<<"$(tr -d '\r' <<<"$screen")"

# An empty listing says so to a person (stderr, on a terminal); a script
# reading stdout gets nothing.
out=$(pty_watch "" status --match 'none:*')
check "terminal: an empty listing says so" grep -q 'rlock: no locks found on redis://127.0.0.1:[0-9]* matching "none:\*"' <<<"$out"
r status --match 'none:*'
check "off a terminal: an empty listing prints nothing" test -z "$OUT$ERR"

# Off a terminal: one snapshot per interval, each after the last.
timeout -s INT --preserve-status 1.1 "$RLOCK" status --watch 300ms >"$TEST_TMP/plain" 2>"$TEST_TMP/err"
RC=$?; OUT=$(cat "$TEST_TMP/plain"); ERR=$(cat "$TEST_TMP/err")
expect_rc 0 "off a terminal: SIGINT ends it with 0"
n=$(grep -c '^every 300ms: rlock status' <<<"$OUT")
# One per 300ms interval at most (5 in 1.1s, the first at once); at least two
# (it repeats) on a loaded machine too.
check "off a terminal: a snapshot per interval, no more ($n in 1.1s)" between "$n" 2 5
check "off a terminal: no escape sequences" bash -c '! grep -q $(printf "\\x1b") <<<"$1"' _ "$OUT"
check "off a terminal: each snapshot has the table" test "$(grep -c '^NAME ' <<<"$OUT")" = "$n"

timeout -s INT --preserve-status 0.8 "$RLOCK" status --watch 200ms --json >"$TEST_TMP/json" 2>"$TEST_TMP/err"
RC=$?; OUT=$(cat "$TEST_TMP/json")
expect_rc 0 "--json --watch: SIGINT ends it with 0"
check "--json --watch: one document per line, each with the schema and both locks" python3 -c '
import json,sys
lines = sys.argv[1].splitlines()
assert len(lines) >= 3, lines
for line in lines:
    d = json.loads(line)
    assert d["schema"] == 1 and sorted(l["name"] for l in d["locks"]) == ["w:one", "w:two"], d' "$OUT"

# A server that cannot be reached: said in each frame, and the watch goes on.
timeout -s INT --preserve-status 1 "$RLOCK" -u "redis://127.0.0.1:$(free_port)" --connect-timeout 100ms \
  status --watch 200ms >"$TEST_TMP/down" 2>"$TEST_TMP/err"
RC=$?; OUT=$(cat "$TEST_TMP/down")
expect_rc 0 "Redis down: the watch goes on until SIGINT"
check "Redis down: each frame says so" test "$(grep -c 'trying again every 200ms' <<<"$OUT")" -ge 2
# ... and with --json each frame is still a document, with the error (issue 19:
# it printed nothing on stdout, and a pipeline reading documents saw none).
timeout -s INT --preserve-status 1 "$RLOCK" -u "redis://127.0.0.1:$(free_port)" --connect-timeout 100ms \
  status --watch 200ms --json >"$TEST_TMP/down.json" 2>"$TEST_TMP/err"
RC=$?; OUT=$(cat "$TEST_TMP/down.json")
expect_rc 0 "Redis down, --json: the watch goes on until SIGINT"
check "Redis down, --json: a document per frame with the error and no locks" python3 -c '
import json,sys
lines = sys.argv[1].splitlines()
assert len(lines) >= 2, lines
for line in lines:
    d = json.loads(line)
    assert d["schema"] == 1 and d["locks"] is None and "127.0.0.1" in d["error"], d' "$OUT"

# A reader that goes away: with SIGPIPE ignored (as some job runners do), the
# watch sees EPIPE and ends with 0 instead of writing to nobody forever.
OUT=$(timeout 5 bash -c 'trap "" PIPE; "$1" status --watch 100ms | head -1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$RLOCK")
RC=$?
check "a closed pipe ends the watch (exit ${OUT:-none}, timeout's $RC)" test "$RC:$OUT" = "0:0"

r status --watch 10ms
expect_rc 64 "--watch 10ms: too short"
r status --watch 5x
expect_rc 64 "--watch 5x: not a duration"
finish
