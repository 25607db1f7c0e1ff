#!/usr/bin/env bash
# Hostile servers (hostile_server.py, a fake Redis: no real one sends these replies):
# --io-timeout bounds a whole request even while bytes keep arriving, replies are
# capped in size (64 MiB, 1Mi values), and every failure is exit 69 or 70 with one
# error line, in bounded time and memory. The pub/sub wait is capped too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_helpers.sh"
says() { grep -qF -- "$1" <<<"$ERR"; }

# --- defect 6: bytes that keep arriving must not extend the deadline. The line
# never ends, and hiredis rescans it after each receive, so there is always more
# to read; without a deadline checked on every receive this ran until the server
# stopped.
hr stream --io-timeout 1s acquire U
clean 69 2500 "endless status line, acquire --io-timeout 1s"
check "endless line: the message names --io-timeout" says "--io-timeout"
hr stream --io-timeout 1s status
clean 69 2500 "endless status line, status (SCAN) --io-timeout 1s"

hr stream-array --io-timeout 1s acquire U
clean 69 2500 "endless slow array, acquire --io-timeout 1s"
check "endless array: the message names --io-timeout" says "--io-timeout"

# --- size caps: the fast streams are refused before they fill memory (the
# server stops at 256 MiB / 24 MiB and goes silent, so an uncapped rlock is
# measured there and then times out: a long --io-timeout keeps the two apart).
hr bigbulk --io-timeout 5s acquire U
clean 70 4000 "\$9000000000 bulk, acquire"
check "bulk: 'reply too large (over 64 MiB)'" says "reply too large (over 64 MiB)"
hr bigbulk --io-timeout 5s release U --owner o
clean 70 4000 "\$9000000000 bulk, release"

hr bigarray --io-timeout 5s acquire U
clean 70 4000 "*100000000 array, acquire"
check "array: 'reply too large (over 1048576 values)'" says "reply too large (over 1048576 values)"

hr nested --io-timeout 5s acquire U
clean 70 4000 "endless array of small arrays, acquire"
check "nested arrays: 'reply too large (over 1048576 values)'" says "reply too large (over 1048576 values)"

hr hugearray --io-timeout 5s acquire U
clean 70 4000 "*3000000000 array header, acquire"

# --- other broken servers
hr garbage --io-timeout 1s acquire U
clean 70 2500 "garbage bytes, acquire"
check "garbage: 'unparsable reply'" says "unparsable reply"

hr silent --io-timeout 1s acquire U
clean 69 2500 "a server that never answers, acquire --io-timeout 1s"
check "silent: waited for the io timeout (${D}ms >= 900)" test "$D" -ge 900
check "silent: 'no reply within 1s (--io-timeout)'" says "no reply within 1s (--io-timeout)"

hr close-mid --io-timeout 1s acquire U
clean 69 2500 "a server that closes mid-reply, acquire"
check "close mid-reply: 'closed'" says "closed"

hr wrongtype --io-timeout 1s acquire U
clean 70 2500 "a status where an array is expected, acquire"
hr wrongtype --io-timeout 1s status
clean 70 2500 "a status where an array is expected, status"

# --- the pub/sub wait: the lock looks busy, and the subscription then streams an
# endless bulk string. The waiter has its own deadlines; the cap bounds memory.
# (-q: the error line alone; what a waiter prints off a terminal: test_run_wait_lines.sh)
hr pubsub --io-timeout 1s -q acquire U -w 2s
clean 75 4500 "endless bulk on the subscription, acquire -w 2s"
check "pub/sub: busy after the wait, as with a real holder" says "still busy after waiting 2s"

finish
