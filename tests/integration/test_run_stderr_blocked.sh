#!/usr/bin/env bash
# A blocked stderr never delays a safety kill (hardening defect 7). rlock's
# stderr is a pipe that nobody reads, already full of CMD's own output; then
# (a) the lock is deleted, (b) redis-server is frozen (SIGSTOP) so renewals
# fail and the renewal thread has a warning to write. Both times CMD must be
# stopped in time, rlock must exit 76, and its messages reach the pipe once
# someone reads it.
. "$(dirname "$0")/lib.sh"
start_redis

# blocked_run MODE NAME: runs `rlock --io-timeout 400ms run --ttl 1.5s NAME -- CMD` with stderr
# on a pipe nobody reads until rlock has exited; CMD first fills the pipe (its
# write blocks), writes its pid to a file first. MODE del: DEL the lock 0.4s in;
# freeze: SIGSTOP redis-server 0.4s in (SIGCONT after rlock exits). Prints
# "rc=N cmd_dead_ms=M stderr_bytes=B" and saves rlock's stderr in $TEST_TMP/NAME.err.
blocked_run() {
  python3 - "$RLOCK" "$1" "$2" "$REDIS_PORT" "$REDIS_PID" "$TEST_TMP" <<'PY'
import os, signal, subprocess, sys, time
rlock, mode, name, port, redis_pid, tmp = sys.argv[1:]
pidfile = os.path.join(tmp, name + ".cmd.pid")
r, w = os.pipe()
cmd = ["sh", "-c", 'echo $$ > "$1"; exec head -c 1000000 /dev/zero >&2', "sh", pidfile]
p = subprocess.Popen([rlock, "--io-timeout", "400ms", "run", "--ttl", "1.5s", "--kill-after", "0.3s", name, "--"] + cmd,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w)
os.close(w)
deadline = time.monotonic() + 5
while not (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0) and time.monotonic() < deadline:
    time.sleep(0.01)
cmd_pid = int(open(pidfile).read())
time.sleep(0.4)  # the 64 KiB pipe is full by now: CMD blocks in write(2)
t0 = time.monotonic()
if mode == "del":
    subprocess.run(["redis-cli", "-p", port, "DEL", name], stdout=subprocess.DEVNULL)
else:
    os.kill(int(redis_pid), signal.SIGSTOP)
dead_ms = -1
while time.monotonic() < t0 + 6:
    try:
        state = open("/proc/%d/stat" % cmd_pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    if state in ("Z", "X", "gone"):
        dead_ms = int((time.monotonic() - t0) * 1000)
        break
    time.sleep(0.005)
# Only now does anyone read the pipe: rlock may have exited, or be waiting
# (at most its 1s flush) to write its message.
err = b""
os.set_blocking(r, False)
end = time.monotonic() + 8
while time.monotonic() < end:
    try:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        err += chunk
    except BlockingIOError:
        if p.poll() is not None and time.monotonic() > end - 6:
            pass
        time.sleep(0.01)
rc = p.wait(timeout=5)
if mode == "freeze":
    os.kill(int(redis_pid), signal.SIGCONT)
open(os.path.join(tmp, name + ".err"), "wb").write(err.replace(b"\0", b""))
print("rc=%d cmd_dead_ms=%d stderr_bytes=%d" % (rc, dead_ms, len(err)))
PY
}

out=$(blocked_run del BLOCKDEL); echo "  lock deleted: $out"
eval "$(tr ' ' '\n' <<<"$out" | sed 's/^/B_/')"
check "lock deleted, stderr blocked: CMD stopped (${B_cmd_dead_ms}ms after the DEL, < TTL/3 + kill-after + SLACK_MS)" \
  between "$B_cmd_dead_ms" 0 $(( 500 + 300 + SLACK_MS ))
check "lock deleted, stderr blocked: exit 76 (got $B_rc)" test "$B_rc" = 76
check "lock deleted: the 'lock lost' line reached stderr once it was read" grep -qa "rlock: run \"BLOCKDEL\".*lock lost" "$TEST_TMP/BLOCKDEL.err"

out=$(blocked_run freeze BLOCKFRZ); echo "  redis frozen: $out"
eval "$(tr ' ' '\n' <<<"$out" | sed 's/^/B_/')"
# The lease is 1.5s from the last confirmed renewal (sent at most 0.5s before
# the freeze): CMD must be dead before the server could expire it, 1.5s after.
check "redis frozen, stderr blocked: CMD stopped before the lease could end (${B_cmd_dead_ms}ms < 1500)" \
  between "$B_cmd_dead_ms" 0 1499
check "redis frozen, stderr blocked: exit 76 (got $B_rc)" test "$B_rc" = 76
check "redis frozen: the renewal warning and the loss line reached stderr" \
  bash -c 'grep -qa "cannot renew" "$1" && grep -qa "lock lost" "$1"' _ "$TEST_TMP/BLOCKFRZ.err"
finish
