#!/usr/bin/env bash
# run on a terminal (a pseudo-terminal made by the test): CMD's process group
# gets the terminal's foreground while it runs (so Ctrl-C and Ctrl-Z reach it)
# and rlock takes it back afterwards; Ctrl-Z stops CMD and rlock with it, as a
# shell's job; SIGCONT to rlock ("fg") hands the terminal back and continues
# CMD, which finishes normally.
. "$(dirname "$0")/lib.sh"
start_redis

python3 - "$RLOCK" "$TEST_TMP" <<'PY' >"$TEST_TMP/report" 2>&1
import os, pty, select, signal, sys, time
rlock, tmp = sys.argv[1], sys.argv[2]
script = r'''
"$1" run TTY -- python3 -c "import os; print('cmd-foreground', os.tcgetpgrp(0) == os.getpgrp())"
echo "rc1=$?"
python3 -c "import os; print('shell-foreground-after', os.tcgetpgrp(0) == os.getpgrp())"
"$1" run TTY -- sh -c 'echo $PPID >"$1/supervisor.pid"; sleep 1; echo cmd-finished' sh "$2"
echo "rc2=$?"
'''
pid, master = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", script, "sh", rlock, tmp])
out = b""
def pump(seconds, until=None):
    global out
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
        if until and until():
            return True
    return False
def state(p):
    try:
        return open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
gpath = os.path.join(tmp, "supervisor.pid")
if not pump(10, lambda: os.path.exists(gpath) and os.path.getsize(gpath) > 0):
    sys.exit("no supervisor pid; terminal output so far:\n" + out.decode(errors="replace"))
def parent(p):
    return int(open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[1])
supervisor = int(open(gpath).read())  # CMD's parent, the guardian's keeper
rl = parent(parent(supervisor))  # the guardian's parent: the rlock the shell started
time.sleep(0.2)
os.write(master, b"\x1a")  # Ctrl-Z
stopped = pump(3, lambda: state(rl) == "T")
print("rlock-stopped-with-cmd", stopped)
time.sleep(1.2)  # CMD's sleep 1 would be over by now, had it not been stopped
print("cmd-still-unfinished", b"cmd-finished" not in out)
os.kill(rl, signal.SIGCONT)  # what a shell's "fg" sends
pump(10, lambda: b"rc2=" in out)
os.waitpid(pid, 0)
print(out.decode(errors="replace").replace("\r", ""))
PY
cat "$TEST_TMP/report" | sed 's/^/  | /'
has() { grep -qF "$1" "$TEST_TMP/report"; }
check "CMD's group has the terminal's foreground while it runs" has "cmd-foreground True"
check "the first run exits 0" has "rc1=0"
check "the shell's group has the foreground back afterwards" has "shell-foreground-after True"
check "Ctrl-Z stops rlock along with CMD" has "rlock-stopped-with-cmd True"
check "while stopped, CMD does not go on" has "cmd-still-unfinished True"
check "after SIGCONT (fg) CMD finishes" has "cmd-finished"
check "and rlock exits 0" has "rc2=0"
check "the lock is released" key_gone TTY
finish
