#!/usr/bin/env bash
# The explorer, bounded: tests/chaos/explore runs random, seeded schedules of
# rlock invocations (every subcommand, mode, several names, re-entry, -E,
# --if-unavailable, --once-per, force-unlock [--if-dead], SIGSTOP/SIGKILL of
# rlock, of its whole process group, of rlock and its guardian, of the waiters at a queue's head, Redisson's
# forceUnlock and unlock scripts, a paused or killed server or Redlock master; in its Cluster lane, a
# replica's link cut, a primary killed or paused and failed over, CLUSTER
# FAILOVER, a slot moved; with --partition a host cut off from the server in
# network namespaces) against its own redis-servers for EXPLORE_SECONDS
# (default 60) and judges every schedule
# (see README.md, "Explorer"). A new seed every run (the date); the seed is printed,
# and a failure prints the schedule, its shrunk steps and a replay command.
#   EXPLORE_SEED=S EXPLORE_SECONDS=N bash tests/chaos/test_chaos_explore.sh
. "$(dirname "$0")/../integration/lib.sh"
SEED=${EXPLORE_SEED:-$(date +%s)}
SECS=${EXPLORE_SECONDS:-60}
echo "explore: seed $SEED, ${SECS}s (again: EXPLORE_SEED=$SEED bash $0, or tests/chaos/explore --seed $SEED --seconds $SECS)"
# (its servers run in TMPDIR: lib.sh's cleanup finds any left behind)
# Three lanes share the time: a loopback one (standalone and Redlock schedules),
# the Cluster lane (--cluster-lanes 1 of --lanes 2), and with --partition one
# more, its server and rlocks in network namespaces (root, as CI is; without
# them the explorer fails, it does not skip).
TMPDIR=$TEST_TMP "$PY" "$(dirname "$0")/explore" --seconds "$SECS" --seed "$SEED" --rlock "$RLOCK" --shrink-seconds 30 \
  --lanes 2 --cluster-lanes 1 --partition
RC=$?
check "explore: no violation in ${SECS}s of random schedules (seed $SEED)" test "$RC" = 0
finish
