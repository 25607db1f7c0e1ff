"""redis-py peer of rlock's benchmark: redis_py_run.py NAME -- CMD [ARGS...]

Waits for redis-py's Lock NAME (blocking, no time limit, default 0.1 s polling sleep,
30 s lease without renewal), runs CMD, releases, exits with CMD's status.
Redis: REDIS_URL (set by bench/run).
"""
import os
import subprocess
import sys

import redis


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: redis-py NAME -- CMD [ARGS...]\n")
        return 64
    name, cmd = sys.argv[1], sys.argv[3:]
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    lock = client.lock(name, timeout=30, sleep=0.1, blocking=True, blocking_timeout=None)
    lock.acquire()
    try:
        try:
            rc = subprocess.call(cmd)
        except FileNotFoundError:
            sys.stderr.write("redis-py: %s: command not found\n" % cmd[0])
            rc = 127
        except PermissionError:
            sys.stderr.write("redis-py: %s: permission denied\n" % cmd[0])
            rc = 126
    finally:
        lock.release()
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
