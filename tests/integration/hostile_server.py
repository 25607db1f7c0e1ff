#!/usr/bin/env python3
"""A fake Redis server that answers every request badly, one way per run.

Usage: hostile_server.py MODE PORT_FILE [LIFETIME_SECONDS]

Binds 127.0.0.1 on a free port and writes the port to PORT_FILE once it listens.
It ignores what a request says and answers according to MODE:

  stream        "+", then "x" as fast as possible (up to 256 MiB), never a line end.
                hiredis rescans the whole unfinished line for its end after each
                receive, so rlock reads slower than this arrives: there is always
                more to read, and only a deadline checked while bytes keep
                arriving ends the request (well before any size cap)
  stream-array  "*1000000\\r\\n", then 1000 ":1\\r\\n" every 20 ms: an array that keeps
                arriving slowly and never ends
  bigbulk       "$9000000000\\r\\n", then bytes as fast as possible (up to 256 MiB)
  bigarray      "*100000000\\r\\n" (under hiredis's INT_MAX), then ":1\\r\\n" as fast as
                possible (up to 24 MiB)
  hugearray     "*3000000000\\r\\n": a count over INT_MAX
  nested        an array of 1000 arrays of 1000 arrays of 1000 integers, as fast as
                possible (up to 24 MiB): every array is small, the reply is endless
  garbage       bytes that are not RESP
  silent        nothing: accepts and never answers
  close-mid     the first half of a reply, then closes the connection
  wrongtype     "+OK\\r\\n" (a status where a script's array is expected)
  pubsub        a "busy" acquire answer to every request, a SUBSCRIBE confirmation
                to SUBSCRIBE, then the bigbulk stream on that connection

With HOSTILE_TLS_CERT and HOSTILE_TLS_KEY (PEM files) in its environment it
speaks TLS: each connection's handshake first, then the same misbehaviour
inside the TLS stream (for rediss:// clients).

The fast modes stop sending at their byte limit and keep the connection open, so
an rlock without caps is measured at a known size rather than running the machine
out of memory. The server exits after LIFETIME_SECONDS (default 20) and as soon as
the process that started it is gone. Python 3 standard library only.
"""

import os
import socket
import ssl
import sys
import threading
import time

MiB = 1 << 20


def send_forever(conn, header, chunk, limit, pause=0.0):
    """Sends header, then chunk repeatedly until `limit` bytes, then stays silent."""
    conn.sendall(header)
    sent = len(header)
    while sent < limit:
        conn.sendall(chunk)
        sent += len(chunk)
        if pause:
            time.sleep(pause)
    while True:
        time.sleep(1)


def nested_chunk():
    """One element of the outer array: 1000 arrays of 1000 integers (4 MB)."""
    inner = b"*1000\r\n" + b":1\r\n" * 1000
    return b"*1000\r\n" + inner * 1000


BUSY = b"*5\r\n:0\r\n$5\r\nother\r\n:5000\r\n$4\r\nhash\r\n$-1\r\n"
SUBSCRIBED = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n"


# rlock sends HELLO 2 in the same write as its first request: answered as a
# server older than Redis 6 would, so each mode applies to the request itself.
HELLO = b"*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n"
# acquire, run and renew send INFO replication with it (the replica count for the
# default replica sync): answered as a primary without replicas.
INFO_REPLICATION = b"*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n"
NO_REPLICAS = b"role:master\r\nconnected_slaves:0\r\n"
INFO_REPLY = b"$%d\r\n%s\r\n" % (len(NO_REPLICAS), NO_REPLICAS)
# A request that changes something carries a deadline on the server's clock
# (issue 34): TIME rides in its write, before it, when rlock does not know the
# clock yet (or it is a second old): answered with this machine's.
TIME = b"*1\r\n$4\r\nTIME\r\n"


def time_reply():
    now = time.time()
    sec, usec = b"%d" % int(now), b"%d" % int((now % 1) * 1e6)
    return b"*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(sec), sec, len(usec), usec)


def read_request(conn):
    while True:
        data = conn.recv(65536)
        if not data:
            raise ConnectionError("client gone")
        if data.startswith(HELLO):
            conn.sendall(b"-ERR unknown command 'HELLO'\r\n")
            data = data[len(HELLO):]
        if data.startswith(INFO_REPLICATION):
            conn.sendall(INFO_REPLY)
            data = data[len(INFO_REPLICATION):]
        if data.startswith(TIME):
            conn.sendall(time_reply())
            data = data[len(TIME):]
        if data:
            return data


def serve(mode, conn, tls):
    try:
        if tls is not None:
            conn = tls.wrap_socket(conn, server_side=True)
        request = read_request(conn)
        if mode == "stream":
            send_forever(conn, b"+", b"x" * 65536, 256 * MiB)
        elif mode == "stream-array":
            send_forever(conn, b"*1000000\r\n", b":1\r\n" * 1000, 1 << 62, pause=0.02)
        elif mode == "bigbulk":
            send_forever(conn, b"$9000000000\r\n", b"x" * MiB, 256 * MiB)
        elif mode == "bigarray":
            send_forever(conn, b"*100000000\r\n", b":1\r\n" * (MiB // 4), 24 * MiB)
        elif mode == "hugearray":
            send_forever(conn, b"*3000000000\r\n", b":1\r\n" * 1024, 1 * MiB)
        elif mode == "nested":
            send_forever(conn, b"*1000\r\n", nested_chunk(), 24 * MiB)
        elif mode == "garbage":
            conn.sendall(b"GARBAGE \x00\xff not resp\r\n")
            time.sleep(60)
        elif mode == "silent":
            time.sleep(60)
        elif mode == "close-mid":
            conn.sendall(b"*5\r\n:0\r\n$5\r\not")
            time.sleep(0.1)
            conn.close()
        elif mode == "wrongtype":
            while True:
                conn.sendall(b"+OK\r\n")
                request = read_request(conn)
        elif mode == "pubsub":
            while b"SUBSCRIBE" not in request:
                conn.sendall(BUSY)
                if request.endswith(INFO_REPLICATION):  # a later attempt re-reads the count
                    conn.sendall(INFO_REPLY)
                request = read_request(conn)
            channel = request.split(b"\r\n")[-2]
            conn.sendall(SUBSCRIBED % (len(channel), channel))
            send_forever(conn, b"$9000000000\r\n", b"x" * MiB, 256 * MiB)
        else:
            raise SystemExit("unknown mode " + mode)
    except OSError:
        pass  # the client went away (ssl.SSLError is an OSError too)


def main():
    mode, port_file = sys.argv[1], sys.argv[2]
    lifetime = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    parent = os.getppid()
    end = time.monotonic() + lifetime

    def watchdog():
        while time.monotonic() < end and os.getppid() == parent:
            time.sleep(0.1)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    tls = None
    if os.environ.get("HOSTILE_TLS_CERT"):
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(os.environ["HOSTILE_TLS_CERT"], os.environ["HOSTILE_TLS_KEY"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    for _ in range(1000):  # bounded: a test makes a handful of connections
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(mode, conn, tls), daemon=True).start()


if __name__ == "__main__":
    main()
