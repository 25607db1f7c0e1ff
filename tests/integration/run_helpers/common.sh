# Helpers shared by the test_run_*.sh scenarios (sourced after lib.sh).
#
# Pid files: every process a scenario learns about (rlock started in the
# background, or a process of a child's tree that writes its own pid) is
# recorded in "$TEST_TMP/*.pid"; on exit, whatever of them still runs is
# SIGKILLed before lib.sh's cleanup.

ms() { echo $(( $(date +%s%N) / 1000000 )); }
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# alive PID: the process exists and is not a zombie.
alive() {
  local st
  [ -n "${1:-}" ] || return 1
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
dead() { ! alive "$1"; }
# dead_all PID...: none of them is alive.
dead_all() { local p; for p in "$@"; do alive "$p" && return 1; done; return 0; }

run_cleanup() {
  local f p
  for f in "$TEST_TMP"/*.pid; do
    [ -e "$f" ] || continue
    for p in $(cat "$f" 2>/dev/null); do
      alive "$p" && kill -9 "$p" 2>/dev/null
    done
  done
  cleanup
}
trap run_cleanup EXIT

# bg F ARGS...: runs `rlock ARGS...` in the background (signal dispositions
# reset to default, as from an interactive shell). Writes F.pid (rlock's pid),
# F.out, F.err, and at exit F.rc and F.t (ms). Sets BG_PID to rlock's pid.
bg() {
  local f=$1; shift
  rm -f "$f.pid" "$f.rc" "$f.t" "$f.out" "$f.err"
  (
    env --default-signal "$RLOCK" "$@" >"$f.out" 2>"$f.err" </dev/null &
    echo $! >"$f.pid"
    wait $!
    echo $? >"$f.rc.tmp"
    ms >"$f.t"
    mv "$f.rc.tmp" "$f.rc"
  ) 2>/dev/null &
  _pids+=($!)
  local i
  for i in $(seq 1 100); do
    [ -s "$f.pid" ] && break
    sleep 0.01
  done
  BG_PID=$(cat "$f.pid")
}
# bg_done F: the background rlock has exited.
bg_done() { [ -s "$1.rc" ]; }
bg_rc() { cat "$1.rc" 2>/dev/null; }

has_file() { [ -s "$1" ]; }
# pid_of FILE: waits (up to 5s) for FILE and prints the pid in it.
pid_of() { wait_until 5 has_file "$1" && head -n1 "$1"; }

key_gone() { [ "$(rcli EXISTS "$1")" = 0 ]; }
key_there() { [ "$(rcli EXISTS "$1")" = 1 ]; }
numsub() { rcli PUBSUB NUMSUB "redisson_lock__channel:{$1}" | sed -n 2p; }
has_sub() { [ "$(numsub "$1")" -ge 1 ]; }
no_sub() { [ "$(numsub "$1")" = 0 ]; }
