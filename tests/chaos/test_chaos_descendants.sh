#!/usr/bin/env bash
# Chaos 9 - a lost lock stops the command's whole tree (20 cases): half run
# `sh -c 'sleep 600 & wait'` (dash does not pass SIGTERM on to the sleep), half
# start a grandchild in a session of its own with setsid (out of the command's
# process group). The lock is force-unlocked; afterwards no process of the case
# is left, and the run exits 76.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis

# case_procs MARK: live processes whose environment carries CASE_MARK=MARK.
case_procs() { procs_with_env "CASE_MARK=$1"; }
no_case_procs() { [ -z "$(case_procs "$1")" ]; }
sleeps_running() { [ "$(case_procs "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -c sleep)" -ge "$2" ]; }

tree_case() {
  local c=$1 name=T$1 f=$TEST_TMP/t$1 mark=case-$1-$$
  BG_ENV=(CASE_MARK="$mark")
  if [ $((c % 2)) = 1 ]; then
    bg "$f" run --ttl "$TTL" --kill-after 0.5s "$name" -- sh -c 'sleep 600 & wait'
  else
    bg "$f" run --ttl "$TTL" --kill-after 0.5s "$name" -- \
      sh -c 'setsid sh -c "sleep 600 & sleep 601" & sleep 602'
  fi
  local want=$(( c % 2 == 1 ? 1 : 3 ))
  if ! wait_until 5 sleeps_running "$mark" "$want"; then
    record started 0 "case $c: $(case_procs "$mark" | wc -l) processes"; return
  fi
  record started 1 "case $c"
  sleep_ms "$(rand_ms 0 300)"
  local t0; t0=$(ms)
  rcli DEL "$name" >/dev/null # as force-unlock would, minus the wake-up
  wait_until 5 bg_done "$f"
  record exit76 "$([ "$(bg_rc "$f")" = 76 ] && echo 1 || echo 0)" "case $c: rc $(bg_rc "$f")"
  # rlock has exited: by then nothing of the tree may be left.
  local left; left=$(case_procs "$mark" | xargs -r ps -o pid=,args= -p 2>/dev/null | tr '\n' ';')
  record none_left "$([ -z "$left" ] && echo 1 || echo 0)" "case $c: left $left"
  record stop_ms 1 "$(( $(bg_t "$f") - t0 ))"
  for p in $(case_procs "$mark"); do kill -9 "$p" 2>/dev/null; done
}
lanes 4 20 90 tree_case
verdict started "the command tree started (sleep, or setsid grandchildren)"
verdict exit76 "each run exited 76 after the lock was lost"
verdict none_left "no process of the tree outlived rlock ($(summary stop_ms ms) from the loss to rlock's exit)"
hygiene_checks descendants
finish
