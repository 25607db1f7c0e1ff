#!/usr/bin/env python3
"""A small TCP proxy between rlock and Redis, for network faults. Loopback only.

  proxy.py --target-port P --port-file F --ctl FILE [--log FILE] [--max-seconds N]

Listens on 127.0.0.1 (a port the kernel picks, written to --port-file) and
forwards to 127.0.0.1:P. The mode is the first line of --ctl, read whenever the
file changes (write a new file and rename it over, or just overwrite it):

  pass             forward both ways
  delay MS         hold every chunk MS milliseconds, both ways
  delay-up MS      only requests (client -> Redis) are held
  delay-down MS    only replies (Redis -> client) are held
  silent           a partition that keeps the sockets open: nothing is read or
                   forwarded; what was sent is delivered when the mode changes
                   back (as TCP retransmission does after a partition heals)
  blackhole        like silent, but what is sent meanwhile is read and thrown away
  drop             close every connection now, and close new ones at once

It exits by itself after --max-seconds, or when its parent process is gone.
"""
import argparse
import os
import selectors
import socket
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--target-port", type=int, required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--ctl", required=True)
ap.add_argument("--log", default=None)
ap.add_argument("--max-seconds", type=float, default=900)
a = ap.parse_args()

T0 = time.monotonic()
PARENT = os.getppid()
logf = open(a.log, "a", buffering=1) if a.log else None


def log(msg):
    if logf:
        logf.write("%.3f %s\n" % (time.time() * 1000, msg))


class Mode:
    def __init__(self, line):
        parts = (line or "pass").split()
        self.name = parts[0] if parts else "pass"
        ms = float(parts[1]) / 1000.0 if len(parts) > 1 else 0.0
        self.up_delay = ms if self.name in ("delay", "delay-up") else 0.0
        self.down_delay = ms if self.name in ("delay", "delay-down") else 0.0
        self.flowing = self.name not in ("silent", "blackhole", "drop")
        self.reading = self.name != "silent"
        self.discard = self.name == "blackhole"

    def __repr__(self):
        return self.name


class Pipe:
    """One direction of one connection: bytes read from src, queued, written to dst."""

    def __init__(self, src, dst, up):
        self.src, self.dst, self.up = src, dst, up
        self.queue = []  # [(due, bytes)]
        self.eof = False


class Conn:
    n = 0

    def __init__(self, client, upstream):
        Conn.n += 1
        self.id = Conn.n
        self.client, self.upstream = client, upstream
        self.up = Pipe(client, upstream, True)
        self.down = Pipe(upstream, client, False)
        self.closed = False


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(128)
listener.setblocking(False)
with open(a.port_file + ".tmp", "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
os.rename(a.port_file + ".tmp", a.port_file)

conns = []
mode = Mode("pass")
ctl_stamp = None


def read_ctl():
    global mode, ctl_stamp
    try:
        st = os.stat(a.ctl)
    except FileNotFoundError:
        return
    stamp = (st.st_mtime_ns, st.st_ino, st.st_size)
    if stamp == ctl_stamp:
        return
    ctl_stamp = stamp
    try:
        with open(a.ctl) as f:
            line = f.readline().strip()
    except FileNotFoundError:
        return
    new = Mode(line)
    if new.name != mode.name or line != getattr(mode, "line", None):
        log("mode %s -> %s" % (mode, line))
    new.line = line
    mode = new
    if mode.name == "drop":
        for c in conns:
            close(c, "drop")


def close(c, why):
    if c.closed:
        return
    c.closed = True
    log("conn %d closed (%s)" % (c.id, why))
    for s in (c.client, c.upstream):
        try:
            s.close()
        except OSError:
            pass


def accept():
    while True:
        try:
            cs, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        if mode.name == "drop":
            cs.close()
            log("refused a connection (drop)")
            continue
        us = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        us.settimeout(1.0)
        try:
            us.connect(("127.0.0.1", a.target_port))
        except OSError as e:
            log("upstream connect failed: %s" % e)
            us.close()
            cs.close()
            continue
        for s in (cs, us):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c = Conn(cs, us)
        conns.append(c)
        log("conn %d opened" % c.id)


def pump(c, p, readable):
    """Read what is there (if the mode reads), then write what is due (if it flows)."""
    now = time.monotonic()
    if readable and mode.reading and not p.eof:
        try:
            data = p.src.recv(65536)
        except (BlockingIOError, InterruptedError):
            data = None
        except OSError:
            data = b""
        if data == b"":
            p.eof = True
        elif data and not mode.discard:
            delay = p_delay(p)
            p.queue.append((now + delay, data))
    if mode.flowing:
        while p.queue and p.queue[0][0] <= now:
            due, data = p.queue[0]
            try:
                n = p.dst.send(data)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                close(c, "send failed")
                return
            if n < len(data):
                p.queue[0] = (due, data[n:])
                break
            p.queue.pop(0)
        if p.eof and not p.queue:
            close(c, "eof from %s" % ("client" if p.up else "redis"))


def p_delay(p):
    return mode.up_delay if p.up else mode.down_delay


sel = selectors.DefaultSelector()
while True:
    if time.monotonic() - T0 > a.max_seconds or os.getppid() != PARENT:
        break
    read_ctl()
    conns = [c for c in conns if not c.closed]
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    if mode.reading:
        for c in conns:
            for p in (c.up, c.down):
                if not p.eof:
                    sel.register(p.src, selectors.EVENT_READ, (c, p))
    timeout = 0.02
    nxt = [p.queue[0][0] for c in conns for p in (c.up, c.down) if p.queue]
    if nxt and mode.flowing:
        timeout = max(0.0, min(timeout, min(nxt) - time.monotonic()))
    ready = set()
    try:
        for key, _ in sel.select(timeout):
            if key.data is None:
                accept()
            else:
                ready.add(key.fileobj)
    except (OSError, ValueError):
        pass
    sel.close()
    for c in list(conns):
        for p in (c.up, c.down):
            if not c.closed:
                pump(c, p, p.src in ready)
log("exit")
