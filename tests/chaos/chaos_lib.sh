# Helpers of the chaos scenarios, sourced right after ../integration/lib.sh:
#   . "$(dirname "$0")/../integration/lib.sh"
#   . "$(dirname "$0")/chaos_lib.sh"
#
# Everything here stays on 127.0.0.1, every wait is bounded, and every process a
# scenario starts is killed on exit: rlock runs (and so their guardians and
# children) carry CHAOS_RUN=$TEST_TMP in their environment, and chaos_cleanup
# SIGKILLs whatever still has it, plus the pids in $TEST_TMP/*.pid.

CHAOS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WITNESS=$CHAOS_DIR/witness
ORACLE=$CHAOS_DIR/oracle.py
TOOL=$CHAOS_DIR/chaostool.py
TTL=${CHAOS_TTL:-1.5s}   # short leases: renew every 0.5s
TTL_MS=1500
# DETECT_MS: how long a command may run on after a loss nobody could prevent
# (eviction, the server's clock jumping, Redis restarted empty). The product's
# promise: the next renewal (due within TTL/3) finds the lock gone and the tree is
# stopped (SIGTERM, SIGKILL after the holders' --kill-after 0.3s). On an idle
# machine that is TTL/3 + 0.3s + a few ms (bench/run --only reaction measures it);
# a loaded 2-core machine may keep the renewal thread or the supervisor off a
# core for a while, so the bound adds one whole lease. A command that is never
# stopped, or that waits for a later renewal interval than the next but one,
# still fails it.
DETECT_MS=$(( TTL_MS / 3 + 300 + TTL_MS ))
command -v flock >/dev/null || { echo "FAIL: flock (util-linux) is not installed"; exit 1; }

sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }
# rand_ms LO HI: a random number of ms in [LO, HI].
rand_ms() { echo $(( $1 + RANDOM % ($2 - $1 + 1) )); }

# Pids whose environment carries this scenario's marker (rlock, its guardian,
# the witness and anything they started), this shell excluded.
chaos_procs() { procs_with_env "CHAOS_RUN=$TEST_TMP" | grep -vx "$$"; }
no_chaos_procs() { [ -z "$(chaos_procs)" ]; }

chaos_cleanup() {
  local f p ours
  for p in $(chaos_procs); do kill -9 "$p" 2>/dev/null; done
  # A pid file's process only while it is still one of this shell's jobs
  # (lib.sh's our_jobs: the pid of one that ended may be another test's now).
  ours=$(our_jobs)
  for f in "$TEST_TMP"/*.pid; do
    [ -e "$f" ] || continue
    for p in $(cat "$f" 2>/dev/null); do
      [[ $ours == *" $p "* ]] && kill -CONT "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
    done
  done
  [ -n "${REDIS_PID:-}" ] && kill -CONT "$REDIS_PID" 2>/dev/null
  cleanup
}
trap chaos_cleanup EXIT


# rlock runs started with lib.sh's `bg` carry the scenario's marker.
BG_BASE_ENV=(CHAOS_RUN="$TEST_TMP")

# --- the oracle -------------------------------------------------------------
# A witness directory per scenario (or per case): new_witness_dir NAME sets WD.
new_witness_dir() {
  WD=$TEST_TMP/w-$1
  rm -rf "$WD"; mkdir -p "$WD"
  BG_ENV=(WITNESS_DIR="$WD")
}
# oracle [DIR] [--since MS]: runs oracle.py and sets O_starts, O_overlaps, ...
oracle() {
  local dir=${1:-$WD}; shift || true
  ORACLE_OUT=$(python3 "$ORACLE" "$dir" --details "$@")
  eval "$(echo "$ORACLE_OUT" | grep -E '^[a-z_]+=[0-9-]+$' | sed 's/^/O_/')"
}
oracle_details() { echo "$ORACLE_OUT" | grep '^#' | head -${1:-10} | sed 's/^/  /'; }

# wait_event KIND TAG SECONDS [DIR]: waits for the witness event, sets EV (the
# line), EV_T (ms), EV_PID, EV_FENCE, EV_OWNER.
wait_event() {
  local kind=$1 tag=$2 limit=$3 dir=${4:-$WD}
  local end=$(( $(ms) + limit * 1000 ))
  EV=
  while [ "$(ms)" -lt $end ]; do
    EV=$(grep -E "^$kind [0-9.]+ .* tag=$tag( |\$)" "$dir/events" 2>/dev/null | head -n1)
    [ -n "$EV" ] && break
    sleep 0.01
  done
  [ -n "$EV" ] || return 1
  EV_T=$(echo "$EV" | cut -d' ' -f2); EV_T=${EV_T%.*} # (mawk's %d stops at 2^31)
  EV_PID=$(echo "$EV" | sed -n 's/.* pid=\([0-9]*\).*/\1/p')
  EV_FENCE=$(echo "$EV" | sed -n 's/.* fence=\(-\{0,1\}[0-9]*\).*/\1/p')
  EV_OWNER=$(echo "$EV" | sed -n 's/.* owner=\([^ ]*\).*/\1/p')
  echo "$EV_PID" >>"$TEST_TMP/witness.pid"
}
event_t() {
  local t; t=$(grep -E "^$1 [0-9.]+ .* tag=$2( |\$)" "${3:-$WD}/events" 2>/dev/null | head -n1 | cut -d' ' -f2)
  echo "${t%.*}"
}


# --- Redis ------------------------------------------------------------------
# Chaos servers accept DEBUG SLEEP (from loopback).
REDIS_EXTRA_ARGS=(--enable-debug-command local)
# redis_restart_empty [DOWN_MS]: SIGKILL, stay down DOWN_MS, start again on the
# same port with nothing in it (no persistence).
redis_restart_empty() {
  kill -9 "$REDIS_PID" 2>/dev/null
  wait "$REDIS_PID" 2>/dev/null
  [ "${1:-0}" -gt 0 ] && sleep_ms "$1"
  start_redis_on "$REDIS_PORT"
}

# monitor_start FILE: a MONITOR of the server into FILE (stopped with monitor_stop).
monitor_start() {
  MON_FILE=$1
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" MONITOR >"$MON_FILE" 2>/dev/null &
  MON_PID=$!
  _pids+=("$MON_PID")
  echo "$MON_PID" >>"$TEST_TMP/monitor.pid"
  wait_until 3 has_file "$MON_FILE"
}
monitor_stop() { [ -n "${MON_PID:-}" ] && kill "$MON_PID" 2>/dev/null; wait "$MON_PID" 2>/dev/null; MON_PID=; }

# --- the TCP proxy: proxy_start, proxy_mode (../integration/lib.sh) ---------

# --- clocks -----------------------------------------------------------------
# build_fakeclock: compiles fakeclock.so once per scenario; sets FAKECLOCK_SO.
build_fakeclock() {
  FAKECLOCK_SO=$TEST_TMP/fakeclock.so
  local cc
  for cc in "${CC:-cc}" gcc gcc-12 "g++ -x c"; do
    command -v ${cc%% *} >/dev/null 2>&1 || continue
    $cc -shared -fPIC -O2 -o "$FAKECLOCK_SO" "$CHAOS_DIR/fakeclock.c" 2>/dev/null && return 0
  done
  return 1
}
# set_offset FILE SECONDS: rewrites the offset file in place (same inode: the
# shim maps it; libfaketime re-reads it with FAKETIME_NO_CACHE=1).
set_offset() { printf '%-63s\n' "$2" | dd of="$1" conv=notrunc status=none; }
LIBFAKETIME=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n1)

# --- hygiene ----------------------------------------------------------------
# The SHA1s of the scripts the binary sends (lua/*.lua as assembled, next to the
# binary: lib.sh's RLOCK_LUA): what SCRIPT EXISTS must know, and nothing else.
lua_shas() { sha1sum "$RLOCK_LUA"/*.lua | awk '{ print $1 }'; }
cached_scripts() { rcli INFO memory | tr -d '\r' | sed -n 's/^number_of_cached_scripts://p'; }

# hygiene_checks LABEL [ALLOWED_KEY_REGEX]: after everything has stopped: no
# process of this scenario is left, no lock key, no pub/sub channel, and the
# script cache holds only rlock's scripts. (Latch keys, which expire by themselves
# within seconds, fencing counters and histories (rlock_log:) are not lock keys.)
hygiene_checks() {
  local label=$1 allowed=${2:-'^(redisson_lock_token|redisson_unlock_latch|rlock_acquire_latch|rlock_log):'}
  check "$label: no process of the scenario is left (rlock, guardian, children)" wait_until 5 no_chaos_procs
  local left; left=$(chaos_procs | head -5 | xargs -r ps -o pid=,args= -p 2>/dev/null)
  [ -n "$left" ] && echo "  left: $left"
  local keys
  keys=$(rcli --scan | grep -Ev "$allowed" | head -20)
  check "$label: no leftover lock keys (got: ${keys:-none})" test -z "$keys"
  r status --match '*'
  check "$label: rlock status --match '*' lists no lock (got: $OUT)" test -z "$(echo "$OUT" | grep -v -i -E '^(no locks|$)')"
  local chans
  chans=$(rcli PUBSUB CHANNELS | head -20)
  check "$label: no pub/sub channel left (PUBSUB CHANNELS: ${chans:-none})" test -z "$chans"
  local known=0 sha
  for sha in $(lua_shas); do
    [ "$(rcli SCRIPT EXISTS "$sha")" = 1 ] && known=$((known + 1))
  done
  local cached; cached=$(cached_scripts)
  check "$label: the script cache holds only rlock's scripts ($cached cached, $known of them rlock's scripts)" \
    test "$cached" = "$known"
}

# --- repeated cases ---------------------------------------------------------
# A guarantee is checked over many independent cases (each its own lock name
# and witness directory), run in a few parallel lanes to keep the suite short.
#   lanes LANES CASES SECONDS FN: runs `FN CASE` for CASE in 1..CASES, spread over
#       LANES background lanes; waits up to SECONDS for all of them. CHAOS_CASES
#       (the sanitizer builds of ./dev test) lowers CASES.
#   record WHAT OK DETAIL: one result of one case (OK is 1 or 0).
#   verdict WHAT DESCRIPTION: a check that every case recorded WHAT as OK.
RESULTS=$TEST_TMP/results
lanes() {
  local nlanes=$1 ncases=$2 limit=$3 fn=$4 lane
  if [ -n "${CHAOS_CASES:-}" ] && [ "$CHAOS_CASES" -lt "$ncases" ]; then
    ncases=$CHAOS_CASES
  fi
  rm -f "$TEST_TMP"/lane.*.done
  for lane in $(seq 1 "$nlanes"); do
    (
      local c
      for ((c = lane; c <= ncases; c += nlanes)); do "$fn" "$c"; done
      touch "$TEST_TMP/lane.$lane.done"
    ) &
    _pids+=($!)
  done
  lanes_done() { [ "$(ls "$TEST_TMP"/lane.*.done 2>/dev/null | wc -l)" -ge "$nlanes" ]; }
  check "$ncases cases in $nlanes lanes finish within ${limit}s" wait_until "$limit" lanes_done
}
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"; }
verdict() {
  local what=$1 desc=$2 n k worst
  n=$(awk -F'\t' -v w="$what" '$1 == w' "$RESULTS" 2>/dev/null | wc -l)
  k=$(awk -F'\t' -v w="$what" '$1 == w && $2 == 1' "$RESULTS" 2>/dev/null | wc -l)
  worst=$(awk -F'\t' -v w="$what" '$1 == w && $2 != 1 { print $3 }' "$RESULTS" 2>/dev/null | head -3 | tr '\n' ';')
  check "$desc: $k/$n cases${worst:+ (failed: $worst)}" test "$n" -gt 0 -a "$k" = "$n"
}
# values WHAT: the DETAIL column of WHAT's records (numbers, for summaries).
values() { awk -F'\t' -v w="$1" '$1 == w { print $3 }' "$RESULTS" 2>/dev/null; }
# summary WHAT UNIT: "min/median/max" of WHAT's numeric details.
summary() {
  values "$1" | sort -n | awk -v u="$2" '{ a[NR] = $1 } END { if (NR) printf "min %s%s, median %s%s, max %s%s", a[1], u, a[int((NR + 1) / 2)], u, a[NR], u }'
}
# wait_dead PID SECONDS: waits for PID to be gone; prints how long it took (ms).
wait_dead() {
  local t0; t0=$(ms)
  local end=$(( t0 + $2 * 1000 ))
  while alive "$1" && [ "$(ms)" -lt $end ]; do sleep 0.005; done
  echo $(( $(ms) - t0 ))
  dead "$1"
}

# --- holders under a fault ----------------------------------------------------
# start_holders TAG N [GLOBAL ARGS...]: N runs `rlock ARGS run --ttl TTL
# --kill-after 0.3s TAG.i -- witness --hold 60`, each with its own witness
# directory; waits for their commands to start and watches their deaths (pidfd)
# into F.death. Sets H_FILES, H_NAMES and H_WITNESSES (pid, or empty when it never
# started), then sleeps somewhere into a renewal interval.
start_holders() {
  local tag=$1 n=$2 i; shift 2
  H_FILES=() H_NAMES=() H_WITNESSES=()
  for i in $(seq 1 "$n"); do
    mkdir -p "$TEST_TMP/w-$tag.$i"
    BG_ENV=(WITNESS_DIR="$TEST_TMP/w-$tag.$i")
    bg "$TEST_TMP/$tag.$i" "$@" run --ttl "$TTL" --kill-after 0.3s "$tag.$i" -- "$WITNESS" --hold 60 --tag h
    H_FILES+=("$TEST_TMP/$tag.$i") H_NAMES+=("$tag.$i")
  done
  for i in $(seq 1 "$n"); do
    if wait_event START h 10 "$TEST_TMP/w-$tag.$i"; then
      H_WITNESSES+=("$EV_PID")
      deathwatch "$EV_PID" "$TEST_TMP/$tag.$i.death"
    else
      H_WITNESSES+=("")
    fi
  done
  sleep_ms "$(rand_ms 100 400)"
}
holders_done() { local f; for f in "${H_FILES[@]}"; do bg_done "$f" || return 1; done; }
# judge_detection LABEL T_FAULT BOUND_MS: for each holder, records started,
# detected_LABEL (its command died within BOUND_MS of T_FAULT), after_LABEL (ms)
# and exit76_LABEL.
judge_detection() {
  local label=$1 t=$2 bound=$3 i
  for i in "${!H_FILES[@]}"; do
    local f=${H_FILES[$i]} case="$label ${H_NAMES[$i]}"
    [ -n "${H_WITNESSES[$i]}" ] || { record started 0 "$case"; continue; }
    record started 1 "$case"
    wait_until 5 has_file "$f.death"
    local death; death=$(cat "$f.death" 2>/dev/null || echo -1)
    local after=$(( death - t ))
    record "detected_$label" "$([ "$death" -gt 0 ] && [ "$after" -le "$bound" ] && echo 1 || echo 0)" "$case: ${after}ms"
    record "after_$label" 1 "$after"
    record "exit76_$label" "$([ "$(bg_rc "$f")" = 76 ] && echo 1 || echo 0)" "$case: rc $(bg_rc "$f") $(tr "\n" "|" <"$f.err" | head -c 600)"
  done
}
