#!/usr/bin/env bash
# The soak's verdict on the fencing token (soak_report.py, issue 47), from made-up
# witness files, fault logs and acquisitions (no server, no rlock process):
# - a holder whose command started late (its lock evicted at once, the next
#   holder acquired and started first) writes refused, the next holder's
#   accepted: no stale write accepted (the reading before issue 47, by START
#   order, counted the next holder's writes as stale: the 15 of issue 47), also
#   when the server's log missed both acquisitions (their tokens tell);
# - a run that took the lock twice is judged by the hold its command has;
# - a token below an earlier acquisition's, with only a restart empty between:
#   FAIL, the two tokens and the fault named;
# - the same with the server's clock brought back too (clock-back): excluded by
#   the promise (docs/safety.md), verdict ok.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"

REPORT=$CHAOS_DIR/soak_report.py
T=1796000000000 # a wall ms

# case DIR: an empty witness directory and fault log
mkcase() { mkdir -p "$TEST_TMP/$1"; : >"$TEST_TMP/$1/events"; : >"$TEST_TMP/$1/resource.log"; : >"$TEST_TMP/$1/faults"; : >"$TEST_TMP/$1/acq"; }
ev() { echo "$2 $(( T + $3 )).000 pid=$4 fence=$5 owner=$6 tag=$7" >>"$TEST_TMP/$1/events"; }
wr() { echo "$2 $(( T + $3 )).000 pid=$4 fence=$5 max=$6 tag=$7 what=tick" >>"$TEST_TMP/$1/resource.log"; }
acq() { echo "ACQUIRED $(( T + $2 )) owner=$3 fence=$4 server=$5" >>"$TEST_TMP/$1/acq"; }
fault() { echo "$2 $(( T + $3 )) $(( T + $4 )) offset=+0" >>"$TEST_TMP/$1/faults"; }
report() { OUT=$("$PY" "$REPORT" "$TEST_TMP/$1" "$TEST_TMP/$1/faults" "$(( T + 100000 ))" 1500 "$TEST_TMP/$1/acq" 2>&1); RC=$?; }
# says WHAT REGEX: the report has a line matching REGEX
says() { check "$1" grep -q -- "$2" <<<"$OUT"; }

# Late start: q acquired (token 100) at +0 and lost it to an eviction at once; p
# acquired (101) at +50 and started at +200; q's command started at +300 (its
# write refused) and was stopped at its first renewal; p wrote on until +600.
mkcase late
fault late evict -100 1000
acq late 0 q 100 1
acq late 50 p 101 1
wr late ACCEPT 190 2 101 -1 p; ev late START 200 2 101 p p
wr late STALE 290 1 100 101 q; ev late START 300 1 100 q q
for t in 320 340 360 380 400 420 440 460 480 500 520 540 560 580 600; do wr late ACCEPT $t 2 101 101 p; done
ev late TERM 510 1 100 q q; ev late END 610 2 101 p p
report late
check "late start: verdict ok ($OUT)" test "$RC" = 0
says "late start: no stale write accepted" '^stale writes accepted: 0$'
says "late start: the refused write counted" '^stale writes refused by the fenced resource: 1$'
check "late start: counted as a command started after a later acquisition's" \
  grep -q "^commands started after a later acquisition's command had started: 1$" <<<"$OUT"
says "late start: the reading by START order would have counted p's 15 writes" '^writes accepted after a later START (the reading before issue 47): 15, of them 15 '

# The same when the server's log missed both acquisitions (a MONITOR that was
# reconnecting): one counter gave both tokens (no restart-empty near), so the
# smaller was granted first: still no stale write accepted.
mkcase unseen
cp "$TEST_TMP/late/"{events,resource.log,faults} "$TEST_TMP/unseen/"
report unseen
check "late start, acquisitions not seen: verdict ok ($OUT)" test "$RC" = 0
says "late start, acquisitions not seen: no stale write accepted" '^stale writes accepted: 0$'

# One run that took the lock twice (its first answer lost, the lease ran out, its
# resend found the lock taken and it waited for a fresh one): r took 200, q took
# 201 and ran, r took 202 and ran after q: r's writes are the newer holder's.
mkcase twice
acq twice 0 r 200 1
acq twice 1500 q 201 1
wr twice ACCEPT 1600 2 201 -1 q; ev twice START 1610 2 201 q q
wr twice ACCEPT 1700 2 201 201 q; ev twice END 1710 2 201 q q
acq twice 1750 r 202 1
wr twice ACCEPT 2000 1 202 201 r; ev twice START 2010 1 202 r r
wr twice ACCEPT 2100 1 202 202 r; ev twice END 2110 1 202 r r
report twice
check "a run that took the lock twice: verdict ok ($OUT)" test "$RC" = 0
says "a run that took the lock twice: no stale write accepted" '^stale writes accepted: 0$'

# A token gone back across a restart empty (the server's clock kept): p took 500,
# the server restarted empty, q took 400 and started; p's writes go on, accepted.
mkcase back
acq back 0 p 500 1
wr back ACCEPT 10 1 500 -1 p; ev back START 20 1 500 p p
fault back restart-empty 100 500
acq back 600 q 400 2
wr back STALE 700 2 400 500 q; ev back START 710 2 400 q q
wr back ACCEPT 720 1 500 500 p; wr back ACCEPT 740 1 500 500 p
ev back END 800 1 500 p p; ev back END 900 2 400 q q
report back
check "token back: verdict FAIL ($OUT)" test "$RC" = 1
says "token back: the token out of order named with both tokens and the restart" '^  #2 q fence 400 (server run 2) came after #1 p fence 500 (server run 1) .*restart-empty@'
says "token back: p's 2 writes after q started are stale writes accepted, with both tokens" '^  2 write(s) .* from the older holder p fence 500, .*the newer holder (acquired) q fence 400, .*faults between: restart-empty@'

# The same with the clock brought back: excluded by the promise.
mkcase excused
cp "$TEST_TMP/back/"{events,resource.log,acq} "$TEST_TMP/excused/"
fault excused clock-back 50 60
fault excused restart-empty 100 500
report excused
check "data lost and the clock back: verdict ok ($OUT)" test "$RC" = 0
says "data lost and the clock back: the token out of order is excluded by the promise" '^tokens not above every earlier acquisition.s: 1 (1 excluded by the promise)$'
says "data lost and the clock back: the writes are excluded, not accepted" '^stale writes accepted: 0 (and 2 excluded by the promise)$'
finish
