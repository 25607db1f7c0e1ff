#!/usr/bin/env bash
# run --max-hold stops a child that holds the lock too long (exit 76, tree gone,
# lock released); run --hold-min keeps the lock after a quick child until DUR
# after acquisition, then lets it expire.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/run_helpers/common.sh"
start_redis

# --- --max-hold 1s on sleep 30
T=$TEST_TMP/m1
t0=$(ms)
bg "$T" run M --max-hold 1s -- sh -c 'echo $$ >$1.sh.pid; sleep 30 & echo $! >$1.sleep.pid; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
check "M is held during the run" key_there M
check "rlock exits" wait_until 6 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  --max-hold 1s: rlock exited after ${d}ms"
check "--max-hold: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "--max-hold 1s: exited after 1s, not much later (${d}ms: 900..1000 + SLACK_MS)" between "$d" 900 $(( 1000 + SLACK_MS ))
check "--max-hold: the child sh is gone" wait_until 1 dead "$sh_pid"
check "--max-hold: the sleep 30 is gone" wait_until 1 dead "$sleep_pid"
check "--max-hold: the lock is released (EXISTS M = 0)" key_gone M
check "--max-hold: stderr says why in an 'rlock: ' line" grep -q '^rlock: .*max-hold' "$T.err"

# --max-hold on a child that ignores SIGTERM: SIGKILL after --kill-after
T=$TEST_TMP/m2
t0=$(ms)
bg "$T" run M --max-hold 1s --kill-after 1s -- sh -c 'trap "" TERM; echo $$ >$1.sh.pid; sleep 30 & echo $! >$1.sleep.pid; wait; wait; wait' sh "$T"
sh_pid=$(pid_of "$T.sh.pid"); sleep_pid=$(pid_of "$T.sleep.pid")
check "rlock exits" wait_until 6 bg_done "$T"
d=$(( $(cat "$T.t") - t0 )); echo "  --max-hold 1s --kill-after 1s, TERM ignored: rlock exited after ${d}ms"
check "--max-hold + TERM ignored: exit 76 (got $(bg_rc "$T"))" test "$(bg_rc "$T")" = 76
check "--max-hold + TERM ignored: killed 1s after the SIGTERM (${d}ms: 1900..2000 + SLACK_MS)" between "$d" 1900 $(( 2000 + SLACK_MS ))
check "--max-hold + TERM ignored: the tree is gone" wait_until 1 dead_all "$sh_pid" "$sleep_pid"
check "--max-hold + TERM ignored: M is released" key_gone M

# --max-hold longer than the child: no effect
r run M --max-hold 5s -- sh -c 'exit 4'
expect_rc 4 "--max-hold longer than the child: the child's status"
check "and M is released" key_gone M

# --- --hold-min 3s with true
t0=$(ms)
r run H --hold-min 3s -- true
d=$(( $(ms) - t0 ))
held_for=$(( $(lease_end_ms H) - $(acquired_at_ms H) ))
expect_rc 0 "--hold-min 3s -- true"
check "rlock returned at once, not after the 3s (${d}ms < 3000ms)" test "$d" -lt 3000
check "H is still held after rlock exited" key_there H
check "H's lease ends 3s after its acquisition, server time (${held_for}ms)" between "$held_for" 2000 3050
# Issue 43: a hold kept by --hold-min after CMD ended is no heartbeat that
# stopped ("RENEWED 2m ago"): status shows it kept to its end.
r status
check "status: H's RENEWED says hold-min (got: $(grep '^H ' <<<"$OUT"))" grep -Eq '^H +rlock .* hold-min 0 ' <<<"$OUT"
r status H
check "status H: kept by --hold-min until its end, not renewed" \
  eval 'grep -q "kept by --hold-min until 20" <<<"$OUT" && ! grep -q ", renewed " <<<"$OUT"'
kept=$(jget "$(rcli HGET H rlock:meta)" kept_until_ms 2>/dev/null || echo 0)
check "the record's kept_until_ms is the lease end (${kept} vs $(lease_end_ms H))" \
  eval '[ $(( kept - $(lease_end_ms H) )) -le 5 ] && [ $(( $(lease_end_ms H) - kept )) -le 5 ]'
r --json status H
check "status --json: the holder's kept_until_ms" grep -q "\"kept_until_ms\":$kept" <<<"$OUT"
r run H -n -- echo should-not-run
expect_rc 75 "a second run -n on H meanwhile is busy"
check "the second run's command did not run" test -z "$OUT"
r run H -n -E 9 -- true
expect_rc 9 "-E 9 for the busy run"
check "H expires about 3s after acquisition" wait_until 5 key_gone H
d=$(( $(ms) - t0 )); echo "  H became free ${d}ms after the run started"
check "H was free 3s after acquisition, not much later (${d}ms: 2700..3000 + SLACK_MS)" between "$d" 2700 $(( 3000 + SLACK_MS ))
r run H -n -- true
expect_rc 0 "after --hold-min has passed, run -n gets H"
check "and releases it" key_gone H

# --hold-min shorter than the child: released at once
r run H --hold-min 200ms -- sleep 0.5
expect_rc 0 "--hold-min 200ms with a 0.5s child"
check "released at once when --hold-min has already passed" key_gone H

finish
