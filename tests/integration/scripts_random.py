#!/usr/bin/env python3
"""Every script against keys filled with random types and values (issue 44).

Usage: scripts_random.py RLOCK PORT CASES SEED

For each case: a fresh lock name whose key and companion keys (lock/names.hpp
LockKeys) hold random types and values (hashes with owner-like fields and
counts, rlock:meta garbage, a 'mode' field, strings, lists, sets, sorted sets,
streams; or nothing), then one rlock request by an owner nobody used
(acquire in each mode, release, renew, status, history, force-unlock --if-dead,
run). Checks: rlock answers with a documented status (0, 1, 75, 76), or the
scripts' DAMAGED answer (lua/lib/damaged.lua: exit 70 with one line naming the
key of a type or value the request cannot use, "nothing changed"), and then
nothing at all was written: every key of the lock (NAME and each key with
{NAME} in it: companions, latches, history) is as it was. Never another 70,
nor a script error, nor Redis's own refusal (WRONGTYPE, not an integer,
overflow: a script stopped midway, keeping what it had written). And what
belongs to someone else is untouched: a release or renew by that stranger, a
busy acquisition, a status or history read leave the lock's key as it was
(its content and expiry), whatever it held; and no acquisition succeeds over
a hash holding another owner's field. Prints one line per finding and "cases
N, findings F" (with RANDOM_VERBOSE=1, each DAMAGED answer too). Records are
data: nothing here may be trusted by the scripts.
"""

import os
import random
import socket
import subprocess
import sys

RLOCK, PORT, CASES, SEED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
VERBOSE = os.environ.get("RANDOM_VERBOSE") == "1"
# Redis refusing a command on a value it cannot use: a script stopped midway.
REFUSALS = ("WRONGTYPE", "ERR value is not an integer", "ERR increment or decrement would overflow",
            "ERR value is not a valid float")


class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), 10)
        self.file = self.sock.makefile("rb")

    def __call__(self, *words):
        words = [w if isinstance(w, bytes) else str(w).encode() for w in words]
        self.sock.sendall(b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
        return self.read()

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"-":
            return RuntimeError(rest.decode(errors="replace"))
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ConnectionError(f"not RESP: {line!r}")


def companions(name):
    """NAME's companion keys (lock/names.hpp), NAME without braces."""
    t = "{" + name + "}"
    return ["redisson_lock_token:" + t, "redisson_unlock_latch:" + t, "rlock_acquire_latch:" + t,
            "redisson_lock_queue:" + t, "redisson_lock_timeout:" + t, "rlock_waiters:" + t,
            t + ":timeout", "rlock_permits:" + t, "rlock_write_intent:" + t, "rlock_done:" + t,
            "rlock_log:" + t, "rlock_turns:" + t, t + ":someone:rwlock_timeout:1"]


def value(rng):
    """A random value: numbers of every kind, JSON-ish text, bytes, empty."""
    return rng.choice([
        lambda: b"", lambda: b"1", lambda: b"0", lambda: b"-1", lambda: b"2", lambda: b"9223372036854775807",
        lambda: b"-9223372036854775808", lambda: b"99999999999999999999", lambda: b"1.5", lambda: b"nan",
        lambda: b"inf", lambda: b"1e400", lambda: b"0x10", lambda: b" 3", lambda: b"read", lambda: b"write",
        lambda: b"{}", lambda: b"[]", lambda: b"null", lambda: b'{"pid":-1,"ttl_ms":"x","host":[1]}',
        lambda: b'{"pid":1,"boot_id":"' + os.urandom(4).hex().encode() + b'","start_ticks":1e30}',
        lambda: os.urandom(rng.randint(1, 40)), lambda: b"x" * rng.choice([1, 1024, 70000]),
        lambda: str(rng.randint(-10**6, 10**13)).encode(),
    ])()


def field(rng):
    return rng.choice([b"rlock:meta", b"mode", b"rlock:x", b"someone:1", b"a-b-c:7:write",
                       b"8f14e45f-ceea-467a-9af0-1e3f2c3a4b5c:1", b"", os.urandom(6), b"stranger"])


def fill(r, key, rng):
    kind = rng.choice(["none", "none", "hash", "hash", "hash", "string", "list", "set", "zset", "stream"])
    if kind == "hash":
        for _ in range(rng.randint(1, 5)):
            r("HSET", key, field(rng), value(rng))
    elif kind == "string":
        r("SET", key, value(rng))
    elif kind == "list":
        r("RPUSH", key, *[value(rng) for _ in range(rng.randint(1, 4))])
    elif kind == "set":
        r("SADD", key, *[value(rng) for _ in range(rng.randint(1, 4))])
    elif kind == "zset":
        for _ in range(rng.randint(1, 4)):
            r("ZADD", key, rng.choice([-1, 0, 1, 1e15, 3.5, rng.randint(0, 2 ** 50)]), value(rng))
    elif kind == "stream":
        for _ in range(rng.randint(1, 3)):
            r("XADD", key, "*", field(rng) or b"f", value(rng))
    if kind != "none" and rng.random() < 0.6:
        # Leases that cannot run out during the case (a key expiring meanwhile
        # would be a change nobody made).
        r("PEXPIRE", key, rng.choice([60000, 10 ** 9]))


def snapshot(r, key):
    """The key's type, content (in an order of its own: a hash's or a set's
    iteration order changes with rehashing, so DUMP's bytes do) and whether it
    expires; None when there is no key."""
    kind = r("TYPE", key)
    if kind == b"none":
        return None
    content = {
        b"hash": lambda: sorted(zip(*[iter(r("HGETALL", key))] * 2)),
        b"string": lambda: r("GET", key),
        b"list": lambda: r("LRANGE", key, 0, -1),
        b"set": lambda: sorted(r("SMEMBERS", key)),
        b"zset": lambda: r("ZRANGE", key, 0, -1, "WITHSCORES"),
        b"stream": lambda: r("XRANGE", key, "-", "+"),
    }.get(kind, lambda: r("DUMP", key))()
    return kind, content, r("PTTL", key) > 0


def every_key(r, name):
    """NAME's keys (NAME, and every key with {NAME} in it) and their snapshots."""
    keys, cursor = {name.encode()}, b"0"
    while True:
        cursor, found = r("SCAN", cursor, "MATCH", "*{" + name + "}*", "COUNT", 1000)
        keys.update(found)
        if cursor == b"0":
            break
    return {key: snap for key in sorted(keys) if (snap := snapshot(r, key)) is not None}


# The scripts' DAMAGED answer (lua/lib/damaged.lua), as rlock prints it.
DAMAGED = "the key ", ": nothing changed (delete that key to use the lock again)"


def main():
    r = Redis(PORT)
    findings = damaged = 0
    only = os.environ.get("RANDOM_CASE")
    for case in range(CASES) if only is None else [int(only)]:
        rng = random.Random(SEED * 100003 + case)
        name = f"rnd{SEED}-{case}"
        for key in [name] + companions(name):
            if key.startswith("redisson_lock_token:") and rng.random() < 0.5:
                # Half the time a counter rlock can count on (or none), so the
                # requests get past it to the other keys.
                if rng.random() < 0.7:
                    r("SET", key, rng.randint(0, 10 ** 13))
                continue
            fill(r, key, rng)
        stranger = f"stranger-{SEED}-{case}"
        mode = rng.choice([[], [], ["--fair"], ["--shared"], ["--write"], ["--limit", "2"]])
        op = rng.choice(["acquire", "acquire", "release", "renew", "status", "history", "force-unlock", "run"])
        args = {
            "acquire": ["acquire", name, "--owner", stranger, "--ttl", "10s"] + mode,
            "release": ["release", name, "--owner", stranger] + mode,
            "renew": ["renew", name, "--owner", stranger] + mode,
            "status": ["status", name, "--json"],
            "history": ["history", name],
            "force-unlock": ["force-unlock", name, "--if-dead"],
            "run": ["run", name, "--ttl", "10s"] + mode + ["--", "true"],
        }[op]
        before = snapshot(r, name)
        all_before = every_key(r, name)
        owners = [f for f in (r("HKEYS", name) if r("TYPE", name) == b"hash" else [])
                  if not f.startswith(b"rlock:") and f != b"mode"]
        try:
            done = subprocess.run([RLOCK, *args], capture_output=True, timeout=60,
                                  env=dict(os.environ, RLOCK_URL=f"redis://127.0.0.1:{PORT}"))
            rc, err = done.returncode, done.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        after = snapshot(r, name)
        what = f"case {case} (seed {SEED}): rlock {' '.join(args)} on a {r('TYPE', name)!r} key"
        # Documented statuses: 0, 1 (not the owner, another mode, a foreign key),
        # 75 (busy), 76 (run: lost); 70 only with the DAMAGED answer's one line.
        lines = err.strip().splitlines()
        is_damaged = rc == 70 and len(lines) == 1 and lines[0].startswith("rlock: ") and \
            all(part in lines[0] for part in DAMAGED)
        if any(refusal in err for refusal in REFUSALS):
            print(f"FINDING {what}: exit {rc}: Redis refused midway: {err.strip()[:300]}")
            findings += 1
        elif is_damaged:
            damaged += 1
            if VERBOSE:
                print(f"damaged {what}: {err.strip()[:200]}")
            all_after = every_key(r, name)
            if all_after != all_before:
                changed = sorted(k for k in set(all_before) | set(all_after) if all_before.get(k) != all_after.get(k))
                print(f"FINDING {what}: answered DAMAGED but changed {changed[:6]!r}")
                findings += 1
        elif rc not in (0, 1, 75, 76) or "script" in err.lower() or "attempt to" in err:
            print(f"FINDING {what}: exit {rc}: {err.strip()[:300]}")
            findings += 1
        # A stranger's release or renew, a read, a refused acquisition of a
        # key that is someone's (owner fields) or not a lock at all: the key
        # as it was. (A read-write hash with no owner left is free: an
        # acquisition may clear it first.)
        someones = owners or (before is not None and before[0] != b"hash")
        if op in ("release", "renew", "status", "history") or (op == "acquire" and rc != 0 and someones):
            if before is not None and after != before:
                print(f"FINDING {what}: exit {rc}: the key changed")
                if VERBOSE:
                    print(f"  before: {str(before)[:600]}\n  after:  {str(after)[:600]}\n  {err.strip()[:300]}")
                findings += 1
        # Taken over someone's fields: a lock held by another owner (readers
        # share a read-write hash whose mode is read: not a taking-over).
        shared_read = mode == ["--shared"] and before is not None and before[0] == b"hash" and \
            dict(before[1]).get(b"mode") == b"read"
        if op == "acquire" and rc == 0 and owners and stranger.encode() not in owners and not shared_read:
            print(f"FINDING {what}: acquired over the fields {owners[:4]!r}")
            if VERBOSE:
                print(f"  before: {str(before)[:600]}\n  after:  {str(after)[:600]}")
            findings += 1
        r("DEL", name, *companions(name))
    print(f"cases {CASES}, findings {findings}, answered DAMAGED (nothing changed) {damaged}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
