#!/usr/bin/env bash
# Redlock with 3 of 5 masters frozen (SIGSTOP: the kernel accepts connections,
# nothing answers) fails (69) within one round, not several (issue 19, defect
# 10: `--io-timeout 1s` took 3 s, the undo on the masters that answered waiting
# on the frozen ones). Bound: the per-node connect + io timeouts of one round,
# plus a generous margin for a busy machine (the figure is printed). After
# SIGCONT, nothing of Q (or of rlock's helper keys) is left without an expiry,
# and Q can be taken and released. Also `run` and a release-less case with the
# undo: 2 masters granted, so the undo must run there (Q gone from both).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"

start_masters 5
U=()
for i in "${MASTER_SET[@]}"; do U+=(-u "$(master_url "$i")"); done
CONNECT_MS=300 IO_MS=1000 MARGIN_MS=1200
TO=(--connect-timeout ${CONNECT_MS}ms --io-timeout ${IO_MS}ms)
BOUND=$((CONNECT_MS + IO_MS + MARGIN_MS))

# no_share_without_expiry I: on master I, no key but a fencing counter lacks an expiry.
no_share_without_expiry() {
  local k bad=0
  for k in $(mcli "$1" --scan 2>/dev/null); do
    [[ $k == redisson_lock_token:* ]] && continue
    if [ "$(mcli "$1" PTTL "$k")" = -1 ]; then echo "  master $1: $k has no expiry"; bad=1; fi
  done
  return $bad
}

freeze_master 2; freeze_master 3; freeze_master 4
t0=$(ms)
r "${U[@]}" "${TO[@]}" acquire Q
took=$(( $(ms) - t0 ))
expect_rc 69 "3 of 5 frozen: acquire is unavailable"
echo "  acquire answered 69 after ${took}ms (connect ${CONNECT_MS}ms + io ${IO_MS}ms + margin ${MARGIN_MS}ms = ${BOUND}ms)"
echo "  $ERR"
check "the answer came within one round (${took}ms <= ${BOUND}ms)" test "$took" -le "$BOUND"
check "Q is gone from the 2 masters that granted it (the undo ran there)" \
  eval '[ "$(mcli 0 EXISTS Q)$(mcli 1 EXISTS Q)" = 00 ]'
why=${ERR#*a majority is} # what follows the count: the masters' errors
names_each() { local i; for i in "$@"; do grep -q "${MASTER_PORTS[$i]}" <<<"$why" || return 1; done; }
check "the error names each master that failed (2, 3 and 4)" names_each 2 3 4

t0=$(ms)
r "${U[@]}" "${TO[@]}" run Q -- true
took=$(( $(ms) - t0 ))
expect_rc 69 "3 of 5 frozen: run is unavailable"
echo "  run answered 69 after ${took}ms"
check "run answered within one round (${took}ms <= ${BOUND}ms)" test "$took" -le "$BOUND"

thaw_master 2; thaw_master 3; thaw_master 4
check "the thawed masters answer" wait_until 5 eval 'master_up 2 && master_up 3 && master_up 4'
sleep 0.3 # the requests queued while frozen are served now
for i in 0 1 2 3 4; do
  check "master $i: nothing of Q left without an expiry" no_share_without_expiry "$i"
done
echo "  Q after the thaw on each master (PTTL): $(for i in 0 1 2 3 4; do printf '%s ' "$(mcli "$i" PTTL Q)"; done)"
r "${U[@]}" "${TO[@]}" acquire Q2 --ttl 10s
expect_rc 0 "all 5 up again: another name is taken"
finish
