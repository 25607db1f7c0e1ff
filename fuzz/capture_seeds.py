#!/usr/bin/env python3
"""Captures the seed corpora of fuzz/ from a real local redis-server.

Usage: fuzz/capture_seeds.py RLOCK_BINARY LUA_DIR
  RLOCK_BINARY  an rlock built from this tree (build/rlock or build-fuzz/rlock)
  LUA_DIR       its assembled scripts (build/lua): an EVALSHA's script is named
                by its SHA1

Starts a redis-server on a free loopback port (standalone), one in cluster mode
(a one-node cluster holding every slot) and a sentinel watching the first, runs
rlock's subcommands through a recording proxy, and writes each raw reply (the
bytes the server sent, as rlock read them) into the corpus of the target that
decodes it: fuzz/corpus/TARGET/NAME (with the target's selector bytes in front
where it has some). Records are read back as rlock wrote them. Seeds of the
targets that read no reply (url, duration, argv, guardian, release_spec,
password_file) and regression entries (regress_*) are kept by hand.
Needs redis-server (7.x: the corpus in the tree came from Debian 12's 7.0.15).
"""

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def parse_one(buf, at=0):
    """(value, end) of the RESP value at `at`, or None when incomplete."""
    if at >= len(buf):
        return None
    nl = buf.find(b"\r\n", at)
    if nl < 0:
        return None
    kind, line = buf[at:at + 1], buf[at + 1:nl]
    end = nl + 2
    if kind in b"+-:,#(_":
        return line, end
    if kind in b"$=!":
        n = int(line)
        if n < 0:
            return None, end
        if len(buf) < end + n + 2:
            return None
        return buf[end:end + n], end + n + 2
    if kind in b"*>~%|":
        n = int(line)
        if kind in b"%|":
            n *= 2
        items = []
        for _ in range(max(n, 0)):
            got = parse_one(buf, end)
            if got is None:
                return None
            items.append(got[0])
            end = got[1]
        return items, end
    raise ValueError(f"not RESP at {at}: {buf[at:at + 20]!r}")


def split(buf):
    """The raw bytes of each whole RESP value in `buf`, with its parsed value."""
    out, at = [], 0
    while True:
        got = parse_one(buf, at)
        if got is None:
            return out
        out.append((buf[at:got[1]], got[0]))
        at = got[1]


class Proxy:
    """Forwards 127.0.0.1:port to the server, keeping each connection's two streams."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.sock.accept()
            server = socket.create_connection(("127.0.0.1", self.upstream))
            streams = [bytearray(), bytearray()]
            self.conns.append(streams)
            for src, dst, buf in ((client, server, streams[0]), (server, client, streams[1])):
                threading.Thread(target=self.pump, args=(src, dst, buf), daemon=True).start()

    @staticmethod
    def pump(src, dst, buf):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            buf.extend(data)
            dst.sendall(data)

    def exchanges(self):
        """(command words, raw reply) of every request seen, in order."""
        out = []
        for requests, replies in self.conns:
            for (_, command), (raw, _) in zip(split(bytes(requests)), split(bytes(replies))):
                out.append(([w if isinstance(w, bytes) else b"" for w in command], raw))
        self.conns.clear()
        return out


def raw_reply(port, *words):
    """The raw bytes of the reply to one command."""
    with socket.create_connection(("127.0.0.1", port), 5) as s:
        req = b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in
                                                  (x.encode() if isinstance(x, str) else x for x in words))
        s.sendall(req)
        buf = b""
        while True:
            buf += s.recv(65536)
            got = split(buf)
            if got:
                return got[0][0]


written = {}
# The targets whose seeds this script writes (the others' are written by hand).
CAPTURED = ("resp", "script_answers", "history", "record", "info", "cluster_nodes", "cluster_slots", "sentinel")


def seed(target, name, data, prefix=b""):
    key = (target, hashlib.sha1(prefix + data).hexdigest())
    if key in written:
        return  # the same bytes again (each rlock run's HELLO, say)
    written[key] = 1
    path = os.path.join(CORPUS, target)
    os.makedirs(path, exist_ok=True)
    if (target, name) in written:
        written[(target, name)] += 1
        if written[(target, name)] > 4:
            return  # a small corpus: four answers of a kind are enough
        name = f"{name}_{written[(target, name)]}"
    else:
        written[(target, name)] = 1
    with open(os.path.join(path, name), "wb") as f:
        f.write(prefix + data)


def main():
    rlock, lua_dir = sys.argv[1], sys.argv[2]
    scripts = {}
    for name in os.listdir(lua_dir):
        if name.endswith(".lua"):
            with open(os.path.join(lua_dir, name), "rb") as f:
                scripts[hashlib.sha1(f.read()).hexdigest()] = name[:-4]
    tmp = tempfile.mkdtemp(prefix="rlock-seeds.")
    procs = []

    def server(*args, conf=None):
        port = free_port()
        d = tempfile.mkdtemp(dir=tmp)
        cmd = ["redis-server"]
        if conf is not None:
            path = os.path.join(d, "sentinel.conf")
            with open(path, "w") as f:
                f.write(conf)
            cmd += [path, "--sentinel"]
        cmd += ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", d, *args]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(port)
        return port

    try:
        # Captured seeds are written again; a regression entry (regress_*) stays.
        for target in CAPTURED:
            path = os.path.join(CORPUS, target)
            for name in os.listdir(path) if os.path.isdir(path) else []:
                if not name.startswith("regress_"):
                    os.remove(os.path.join(path, name))
        port = server()
        proxy = Proxy(port)
        url = f"redis://127.0.0.1:{proxy.port}"
        env = dict(os.environ, RLOCK_URL=url)
        env.pop("REDIS_URL", None)

        def rl(*args, check=False):
            subprocess.run([rlock, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=check, timeout=30)
            time.sleep(0.1)  # the proxy's threads catch up

        # Every state change in every layout, busy and refused answers, inspect and history.
        rl("acquire", "--owner", "seed-a", "--ttl", "1m", "plain", check=True)
        rl("acquire", "--owner", "seed-a", "--ttl", "1m", "plain")  # re-entry
        rl("acquire", "--owner", "seed-b", "plain")                 # busy
        rl("renew", "--owner", "seed-a", "plain")
        rl("renew", "--owner", "seed-b", "plain")                   # not the owner
        rl("release", "--owner", "seed-b", "plain")
        rl("acquire", "--owner", "seed-f", "--fair", "fair")
        rl("acquire", "--owner", "seed-g", "--fair", "fair")
        rl("acquire", "--owner", "seed-r1", "--shared", "rw")
        rl("acquire", "--owner", "seed-r2", "--shared", "rw")
        rl("acquire", "--owner", "seed-w", "--write", "rw")
        rl("acquire", "--owner", "seed-p1", "--limit", "2", "sem")
        rl("acquire", "--owner", "seed-p2", "--limit", "2", "sem")
        rl("acquire", "--owner", "seed-p3", "--limit", "2", "sem")
        rl("acquire", "--owner", "seed-x", "--shared", "plain")     # another layout
        rl("status", "plain", "fair", "rw", "sem", "nothing")
        rl("status", "--json")
        rl("run", "--once-per", "1h", "job", "--", "true")
        rl("run", "--once-per", "1h", "job", "--", "true")          # done in this window
        rl("run", "-w", "1s", "plain2", "--", "sh", "-c", "exit 3")
        rl("history", "plain")
        rl("history", "job")
        rl("doctor")
        # Records as rlock wrote them, before the releases.
        for key in ("plain", "fair", "rw"):
            seed("record", f"meta_{key}", parse_one(raw_reply(port, "HGET", key, "rlock:meta"))[0] or b"")
        seed("record", "done_job", parse_one(raw_reply(port, "GET", "rlock_done:{job}"))[0] or b"")
        rl("renew", "--owner", "seed-r1", "--shared", "rw")
        rl("renew", "--owner", "seed-p1", "--limit", "2", "sem")
        rl("release", "--owner", "seed-a", "plain")
        rl("release", "--owner", "seed-a", "plain")
        rl("release", "--owner", "seed-a", "plain")                 # not held any more
        rl("release", "--owner", "seed-f", "--fair", "fair")
        rl("release", "--owner", "seed-r1", "--shared", "rw")
        rl("release", "--owner", "seed-p1", "--limit", "2", "sem")
        rl("release", "--owner", "seed-a", "rw")                    # wrong mode
        rl("force-unlock", "sem")
        raw_reply(port, "SET", "str", "x")
        rl("acquire", "--owner", "seed-a", "str")                   # a foreign key
        rl("release", "--owner", "seed-a", "str")
        rl("history", "plain")

        decoders = {"acquire": 0, "fair_acquire": 0, "rw_acquire": 0, "permit_acquire": 0,
                    "release": 1, "rw_release": 1, "permit_release": 1, "force_unlock": 1,
                    "renew": 2, "rw_renew": 2, "permit_renew": 2}
        for command, raw in proxy.exchanges():
            verb = command[0].upper().decode() if command else "?"
            name = verb.lower()
            if verb == "EVALSHA" or verb == "EVAL":
                script = scripts.get(command[1].decode(), "eval") if verb == "EVALSHA" else "eval"
                name = script
                if script in decoders:
                    seed("script_answers", script, raw, bytes([decoders[script], 0]))
                    seed("script_answers", script + "_holder", raw, bytes([3, 0]))
                elif script == "inspect":
                    for i, (entry, _) in enumerate(split(raw[raw.index(b"\r\n") + 2:])):
                        seed("script_answers", "inspect_entry", entry, bytes([4, 0]))
                elif script == "history_read":
                    seed("history", "history_read", raw)
            elif verb == "HELLO":
                seed("info", "hello", raw, b"\x02")
            elif verb == "INFO":
                seed("info", "info_" + (command[1].decode().lower() if len(command) > 1 else "all"), raw, b"\x00")
            elif verb == "CLUSTER":
                seed("cluster_nodes", "cluster_nodes_standalone", raw, b"\x00")
            seed("resp", name, raw, b"\x03")

        # INFO replication of a primary with a replica, and of the replica.
        replica = server("--replicaof", "127.0.0.1", str(port))
        for _ in range(100):
            if b"connected_slaves:1" in raw_reply(port, "INFO", "replication"):
                break
            time.sleep(0.1)
        info = raw_reply(port, "INFO", "replication")
        seed("info", "info_replication_primary", info, b"\x00")
        seed("info", "connected_replicas_primary", parse_one(info)[0], b"\x01")
        seed("info", "info_replication_replica", raw_reply(replica, "INFO", "replication"), b"\x00")
        seed("info", "hello_replica", raw_reply(replica, "HELLO", "2"), b"\x02")

        # Sentinel watching the primary: its master's address and its replicas.
        sentinel = server(conf=f"sentinel monitor seed 127.0.0.1 {port} 1\nsentinel down-after-milliseconds seed 1000\n")
        for _ in range(100):
            slaves = raw_reply(sentinel, "SENTINEL", "SLAVES", "seed")
            if slaves != b"*0\r\n":
                break
            time.sleep(0.1)
        seed("sentinel", "get_master_addr", raw_reply(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "seed"))
        seed("sentinel", "get_master_addr_unknown", raw_reply(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "x"))
        seed("sentinel", "slaves", slaves)
        seed("sentinel", "both", raw_reply(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "seed") + slaves)
        seed("info", "hello_sentinel", raw_reply(sentinel, "HELLO", "2"), b"\x02")

        # A one-node cluster with every slot, and a replica of it.
        node = server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
        raw_reply(node, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        node2 = server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
        raw_reply(node2, "CLUSTER", "MEET", "127.0.0.1", str(node))
        node_id = parse_one(raw_reply(node, "CLUSTER", "MYID"))[0]
        for _ in range(100):
            if raw_reply(node2, "CLUSTER", "REPLICATE", node_id).startswith(b"+OK"):
                break
            time.sleep(0.1)
        for _ in range(100):
            if b"slave " + node_id in raw_reply(node, "CLUSTER", "NODES"):
                break
            time.sleep(0.1)
        for name, p in (("primary", node), ("replica", node2)):
            nodes = raw_reply(p, "CLUSTER", "NODES")
            seed("cluster_nodes", f"cluster_nodes_{name}", parse_one(nodes)[0], b"\x01")
            seed("cluster_nodes", f"cluster_nodes_{name}_resp", nodes, b"\x00")
            seed("cluster_slots", f"cluster_slots_{name}", raw_reply(p, "CLUSTER", "SLOTS"))
            seed("info", f"info_replication_cluster_{name}", raw_reply(p, "INFO", "replication"), b"\x00")
            seed("info", f"hello_cluster_{name}", raw_reply(p, "HELLO", "2"), b"\x02")
            seed("resp", f"cluster_shards_{name}", raw_reply(p, "CLUSTER", "SHARDS"), b"\x03")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
