#!/usr/bin/env python3
"""Small measuring tools for the chaos scenarios.

  chaostool.py deathwatch OUT PID [--timeout S]
      Waits (pidfd, no polling) for PID to exit and writes the wall-clock ms of
      its death to OUT. Gives up after --timeout seconds (default 60).

  chaostool.py lease MONITOR_LOG KEY [--owner TOKEN]
      Reads `redis-cli MONITOR` output and prints the server-side leases of KEY,
      one per line: "<owner> <start ms> <end ms> <how>", where start is the
      creating HSET (acquire.lua), end is when the last applied PEXPIRE ran out
      or the DEL (release/force-unlock) came first, and how is expired|deleted|open.
      The times are the server's own (the same wall clock as this host's unless
      the server's clock is faked).

  chaostool.py pexpires MONITOR_LOG KEY
      Every PEXPIRE applied to KEY: "<ms> <lease ms>".
"""
import os
import select
import shlex
import sys
import time


def deathwatch(out, pid, timeout):
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        t = time.time() * 1000
    else:
        p = select.poll()
        p.register(fd, select.POLLIN)
        if p.poll(timeout * 1000):
            t = time.time() * 1000
        else:
            t = -1
        os.close(fd)
    with open(out + ".tmp", "w") as f:
        f.write("%d\n" % t)
    os.rename(out + ".tmp", out)


def monitor_lines(path):
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] not in "0123456789":
                continue
            try:
                ts, rest = line.split(" ", 1)
                src_end = rest.index("] ")
                src = rest[1:src_end]
                argv = shlex.split(rest[src_end + 2:])
            except ValueError:
                continue
            yield float(ts) * 1000.0, src, argv


def leases(path, key):
    out = []
    cur = None  # [owner, start, end]
    for t, src, argv in monitor_lines(path):
        if len(argv) < 2 or argv[1] != key:
            continue
        cmd = argv[0].upper()
        if cur is not None and cur[2] is not None and t > cur[2]:
            out.append((cur[0], cur[1], cur[2], "expired"))
            cur = None
        if cmd == "HSET" and "rlock:meta" in argv and cur is None:
            cur = [argv[2], t, None]
        elif cmd == "PEXPIRE" and cur is not None and len(argv) >= 3:
            cur[2] = t + float(argv[2])
        elif cmd in ("DEL", "UNLINK") and cur is not None:
            out.append((cur[0], cur[1], t, "deleted"))
            cur = None
    if cur is not None:
        out.append((cur[0], cur[1], cur[2] if cur[2] is not None else -1, "open"))
    return out


def main(argv):
    if len(argv) >= 3 and argv[0] == "deathwatch":
        timeout = 60.0
        if "--timeout" in argv:
            timeout = float(argv[argv.index("--timeout") + 1])
        deathwatch(argv[1], int(argv[2]), timeout)
        return 0
    if len(argv) >= 3 and argv[0] == "lease":
        owner = argv[argv.index("--owner") + 1] if "--owner" in argv else None
        for o, s, e, how in leases(argv[1], argv[2]):
            if owner is None or o == owner:
                print("%s %d %d %s" % (o, s, e, how))
        return 0
    if len(argv) >= 3 and argv[0] == "pexpires":
        for t, src, args in monitor_lines(argv[1]):
            if len(args) >= 3 and args[0].upper() == "PEXPIRE" and args[1] == argv[2]:
                print("%d %s" % (t, args[2]))
        return 0
    sys.stderr.write(__doc__)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
