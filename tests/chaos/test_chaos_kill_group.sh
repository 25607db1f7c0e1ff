#!/usr/bin/env bash
# Chaos 14 - killed as jobs are really killed (issue 40): a signal to rlock's
# whole process group, as coreutils `timeout` and CI runners send it, or
# rlock and its guardian SIGKILLed by pid together. For each pattern and each
# mode (plain, --fair, -s beside a writer, --limit 1, two names, a Redlock of
# three masters) the holder's command is a setsid'd witness (out of CMD's
# process group and session: the hardest descendant to find), and a waiter is
# queued behind it. After the kill:
#   - the oracle sees no overlap: the waiter's command never ran beside the
#     holder's (the witness's flock lives as long as the process does);
#   - the holder's witness is dead;
#   - the lock was released, not left to expire: the waiter's command started
#     before the holder's 10 s lease could have run out (renewed every 3.3 s,
#     so at least 6.6 s were left at the kill).
# And a -w waiter killed with its group leaves nothing queued (turns, a fair
# queue, a writer's intent), on every master.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
. "$(dirname "$0")/../integration/topology.sh"
start_redis
start_masters 3
LEASE=10s
LEFT_MS=6600 # at least this much of the lease was left at any kill

PATTERNS=(timeout_kill timeout_k setsid_group runner both_pids)
MODES=(plain fair shared limit several redlock)

# mode_args MODE ROLE: the mode's flags and names for the holder or the waiter.
mode_args() {
  local mode=$1 role=$2 name=$3
  case $mode in
    plain) echo "$name" ;;
    fair) echo "--fair $name" ;;
    shared) [ "$role" = h ] && echo "-s $name" || echo "--write $name" ;;
    limit) echo "--limit 1 $name" ;;
    several) echo "$name.a $name.b" ;;
    redlock) echo "$name" ;;
  esac
}
# The launcher of each pattern: a script lib.sh's bg runs in place of rlock.
# (bg's process is not a group leader: setsid needs no fork, and the pid bg
# knows is rlock's, which leads its own group.)
make_launcher() {
  local file=$TEST_TMP/launch-$1
  printf '#!/bin/sh
exec %s "%s" "$@"
' "$2" "$RLOCK" >"$file"
  chmod +x "$file"
}
make_launcher timeout_kill "timeout -s KILL 2"
make_launcher timeout_k "timeout -k 1s 1s"
for p in setsid_group runner both_pids; do make_launcher "$p" setsid; done
launcher() { echo "$TEST_TMP/launch-$1"; }
guardian_of() { pgrep -P "$1" -x rlock-guardian | head -1; }

one_case() {
  local c=$1 np=${#PATTERNS[@]}
  local pattern=${PATTERNS[$(( (c - 1) % np ))]} mode=${MODES[$(( (c - 1) / np ))]}
  local name=KG$c wd=$TEST_TMP/w-kg$c f=$TEST_TMP/kg$c what="$pattern/$mode"
  mkdir -p "$wd"
  local env=(WITNESS_DIR="$wd")
  [ "$mode" = redlock ] && env+=(RLOCK_URL="$REDLOCK_URLS")
  BG_ENV=("${env[@]}")
  # The holder's command is slow to stop: it ignores SIGTERM (a cleanup that
  # takes longer than the runner's grace).
  local saved=$RLOCK
  RLOCK=$(launcher "$pattern")
  # shellcheck disable=SC2046
  bg "$f.h" run --ttl "$LEASE" --kill-after 5s $(mode_args "$mode" h "$name") -- \
    sh -c 'setsid "$1" --hold 60 --ignore-term --tag h & wait' sh "$WITNESS"
  RLOCK=$saved
  local holder=$BG_PID
  if ! wait_event START h 10 "$wd"; then
    record started 0 "$what: the holder's command did not start ($(head -c 300 "$f.h.err"))"; return
  fi
  local witness=$EV_PID
  record started 1 "$what"
  deathwatch "$witness" "$f.death"
  # shellcheck disable=SC2046
  bg "$f.w" run -w 30s --ttl 3s $(mode_args "$mode" w "$name") -- "$WITNESS" --hold 0.05 --tag w
  local t_kill
  case $pattern in
    timeout_kill | timeout_k)
      wait_until 5 bg_done "$f.h"
      t_kill=$(bg_t "$f.h") ;;
    setsid_group)
      sleep_ms "$(rand_ms 200 800)"
      t_kill=$(ms); kill -KILL -- "-$holder" ;;
    runner)
      sleep_ms "$(rand_ms 200 800)"
      kill -TERM -- "-$holder"; sleep 1
      t_kill=$(ms); kill -KILL -- "-$holder" ;;
    both_pids)
      sleep_ms "$(rand_ms 200 800)"
      local g; g=$(guardian_of "$holder")
      t_kill=$(ms); kill -KILL "$holder" $g ;;
  esac
  local took; took=$(wait_dead "$witness" 10)
  record cmd_stopped "$(dead "$witness" && echo 1 || echo 0)" "$what: the witness $(alive "$witness" && echo 'lives on')"
  record stop_ms 1 "$took"
  wait_until 15 bg_done "$f.w"
  local start_w; start_w=$(event_t START w "$wd")
  if [ -n "$start_w" ]; then
    record released "$([ $(( start_w - t_kill )) -lt $LEFT_MS ] && echo 1 || echo 0)" \
      "$what: the waiter in $(( start_w - t_kill ))ms after the kill"
    record release_ms 1 "$(( start_w - t_kill ))"
  else
    record released 0 "$what: the waiter never ran (rc $(bg_rc "$f.w"): $(head -c 200 "$f.w.err"))"
  fi
  oracle "$wd"
  record no_overlap "$([ "$O_overlaps" = 0 ] && echo 1 || echo 0)" "$what: $O_overlaps overlaps"
}


# A -w waiter killed with its group, behind a holder: nothing of it stays queued.
_queued_by() {
  local port=$1 name=$2
  redis-cli -p "$port" ZRANGE "rlock_turns:{$name}" 0 -1
  redis-cli -p "$port" LRANGE "redisson_lock_queue:{$name}" 0 -1
  redis-cli -p "$port" ZRANGE "redisson_lock_timeout:{$name}" 0 -1
  redis-cli -p "$port" EXISTS "rlock_write_intent:{$name}" | grep -v '^0$'
} 2>/dev/null
queued_by() { _queued_by "$@" | sed '/^$/d'; }
queues_of() {
  local name=$1 port
  if [ "$2" = redlock ]; then
    for port in "${MASTER_PORTS[@]}"; do queued_by "$port" "$name"; done
  else
    queued_by "$REDIS_PORT" "$name"
  fi
}
waiter_case() {
  local c=$1 mode=${MODES[$(( c - 1 ))]}
  local name=KW$c f=$TEST_TMP/kw$c
  BG_ENV=()
  [ "$mode" = redlock ] && BG_ENV=(RLOCK_URL="$REDLOCK_URLS")
  local first=$name; [ "$mode" = several ] && first=$name.a
  # shellcheck disable=SC2046
  bg "$f.h" run --ttl "$LEASE" $(mode_args "$mode" h "$name") -- sh -c ': >"$0"; exec sleep 60' "$f.held"
  local holder=$BG_PID
  # The waiter starts only once the holder's command runs: else, on a loaded
  # machine, the waiter may take the lock first, run and leave.
  if ! wait_until 10 test -e "$f.held"; then
    record waiter_queued 0 "$mode: the holder's command did not start ($(head -c 200 "$f.h.err"))"
    kill -TERM "$holder"; wait_until 10 bg_done "$f.h"; return
  fi
  local saved=$RLOCK
  RLOCK=$(launcher setsid_group)
  # shellcheck disable=SC2046
  bg "$f.w" run -w 60s --ttl 3s $(mode_args "$mode" w "$name") -- true
  RLOCK=$saved
  case $mode in
    limit | redlock) ;; # no queue: a semaphore's waiters, and a Redlock's, only listen
    *)
      local queued=1
      wait_until 5 eval '[ -n "$(queues_of "$first" "$mode")" ]' || queued=0
      record waiter_queued "$queued" "$mode: the waiter was not seen queued (rc $(bg_rc "$f.w"): $(head -c 200 "$f.w.err"))" ;;
  esac
  sleep 0.5
  kill -KILL -- "-$BG_PID"
  wait_until 5 eval '[ -z "$(queues_of "$first" "$mode")" ]'
  local left; left=$(queues_of "$first" "$mode" | tr '\n' ' ')
  record nothing_queued "$([ -z "$left" ] && echo 1 || echo 0)" "$mode: left queued: $left"
  kill -TERM "$holder"
  wait_until 10 bg_done "$f.h"
}

lanes 3 $(( ${#PATTERNS[@]} * ${#MODES[@]} )) 300 one_case
verdict started "the holder's command started"
verdict cmd_stopped "the holder's command (a setsid'd descendant, slow to stop) was stopped ($(summary stop_ms ms) after the kill)"
verdict released "the lock was released, not left to expire (the waiter in $(summary release_ms ms) after the kill)"
verdict no_overlap "no overlap seen by the oracle: the waiter never ran beside the killed holder's command"
lanes 3 ${#MODES[@]} 120 waiter_case
verdict waiter_queued "the killed waiter had been queued (a turn, a fair queue, a writer's intent)"
verdict nothing_queued "a -w waiter killed with its group leaves nothing queued"
check "no process of the scenario is left" wait_until 10 no_chaos_procs
finish
