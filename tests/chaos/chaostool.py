#!/usr/bin/env python3
"""Small measuring tools for the chaos scenarios.

  chaostool.py deathwatch OUT PID [--timeout S]
      Waits (pidfd, no polling) for PID to exit and writes the wall-clock ms of
      its death to OUT (-1 if it was gone already). OUT.ready appears once it
      watches. Gives up after --timeout seconds (default 60).

  chaostool.py lease MONITOR_LOG KEY [--owner TOKEN]
      Reads `redis-cli MONITOR` output and prints the server-side leases of KEY,
      one per line: "<owner> <start ms> <end ms> <how>", where start is the
      creating HSET (acquire.lua), end is when the last applied PEXPIRE ran out
      or the DEL (release/force-unlock) came first, and how is expired|deleted|open.
      The times are the server's own (the same wall clock as this host's unless
      the server's clock is faked).

  chaostool.py pexpires MONITOR_LOG KEY
      Every PEXPIRE applied to KEY: "<ms> <lease ms>".

  chaostool.py acquisitions PORT KEY OUT [--stop FILE]
      The order in which the server took KEY (a plain lock): a MONITOR of the
      Redis on 127.0.0.1:PORT, connected again whenever it ends (a server
      restarted on the same port), until FILE exists. Each fresh hold (the
      HSET of KEY's owner field with 'rlock:meta') is appended to OUT as
      "ACQUIRED <wall ms> owner=<token> fence=<record's fence> server=<N>", each
      connection as "CONNECTED <wall ms> server=<N>". The lines are in the
      server's own execution order: what the fencing token promises to follow
      (a witness's START order is not: a holder's command may start late).

  chaostool.py sample PORT OUT [--every S] [--seconds S] [--stop FILE] -- CMD ARGS...
      One long-lived sampler (no process start per sample): sends CMD to the
      Redis on 127.0.0.1:PORT every S seconds (default 0.05) and appends
      "<wall ms sent> <wall ms replied> <reply>" to OUT, until FILE exists or
      --seconds (default 30) have passed. The server ran a sample between its two
      stamps: judge a sample against an interval the test recorded (a command's
      start and end) only if both stamps fall inside it.
"""
import socket
import os
import select
import shlex
import sys
import time


def deathwatch(out, pid, timeout):
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        t = -1  # gone before it was watched: its time of death is unknown
    else:
        open(out + ".ready", "w").close()
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


def resp(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_reply(f):
    line = f.readline()
    if not line:
        raise ConnectionError("closed")
    kind, rest = line[:1], line[1:].rstrip(b"\r\n")
    if kind in (b"+", b"-", b":"):
        return rest.decode(errors="replace")
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return "(nil)"
        data = f.read(n + 2)
        return data[:-2].decode(errors="replace")
    if kind == b"*":
        n = int(rest)
        return ",".join(read_reply(f) for _ in range(max(n, 0)))
    raise ConnectionError("bad reply")


def acquisitions(port, key, out, stop):
    import json
    marker = ' "HSET" "%s" ' % key
    server, run_id = 0, None
    with open(out, "a", buffering=1) as log:
        while not (stop and os.path.exists(stop)):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                    probe.sendall(resp(["INFO", "server"]))
                    info = read_reply(probe.makefile("rb"))
                rid = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("run_id:")), None)
                sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                sock.sendall(resp(["MONITOR"]))
            except (OSError, ConnectionError, ValueError):
                time.sleep(0.005)
                continue
            if rid != run_id:
                server, run_id = server + 1, rid
            log.write("CONNECTED %d server=%d\n" % (time.time() * 1000, server))
            buf = b""
            try:
                while not (stop and os.path.exists(stop)):
                    if b"\n" not in buf:
                        ready, _, _ = select.select([sock], [], [], 0.2)
                        if not ready:
                            continue
                        data = sock.recv(65536)
                        if not data:
                            break
                        buf += data
                        continue
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode(errors="replace")
                    if marker not in text or '"rlock:meta"' not in text:
                        continue
                    try:
                        argv = shlex.split(text[text.index("] ") + 2:])
                        i = argv.index("rlock:meta")
                        if argv[0].upper() != "HSET" or i != 4 or argv[3] != "1":
                            continue  # a fresh take sets the owner's level to 1 with its record
                        fence = json.loads(argv[5]).get("fence")
                    except (ValueError, IndexError, AttributeError):
                        continue
                    log.write("ACQUIRED %d owner=%s fence=%s server=%d\n" % (time.time() * 1000, argv[2], fence, server))
            except (OSError, ConnectionError):
                pass
            finally:
                sock.close()


def sample(port, out, cmd, every, seconds, stop):
    end = time.monotonic() + seconds
    conn = None
    with open(out, "a", buffering=1) as log:
        while time.monotonic() < end and not (stop and os.path.exists(stop)):
            sent = time.time() * 1000
            try:
                if conn is None:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                    conn = (sock, sock.makefile("rb"))
                conn[0].sendall(resp(cmd))
                value = read_reply(conn[1])
            except (OSError, ConnectionError, ValueError):
                conn = None
                value = "(error)"
            log.write("%d %d %s\n" % (sent, time.time() * 1000, value))
            time.sleep(every)


def main(argv):
    if len(argv) >= 4 and argv[0] == "sample" and "--" in argv:
        opts, cmd = argv[:argv.index("--")], argv[argv.index("--") + 1:]
        every, seconds, stop = 0.05, 30.0, None
        if "--every" in opts:
            every = float(opts[opts.index("--every") + 1])
        if "--seconds" in opts:
            seconds = float(opts[opts.index("--seconds") + 1])
        if "--stop" in opts:
            stop = opts[opts.index("--stop") + 1]
        sample(int(opts[1]), opts[2], cmd, every, seconds, stop)
        return 0
    if len(argv) >= 4 and argv[0] == "acquisitions":
        stop = argv[argv.index("--stop") + 1] if "--stop" in argv else None
        acquisitions(int(argv[1]), argv[2], argv[3], stop)
        return 0
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
