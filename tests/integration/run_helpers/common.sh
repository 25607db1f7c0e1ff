# Helpers shared by the test_run_*.sh scenarios (sourced after lib.sh).
#
# Pid files: every process a scenario learns about (rlock started in the
# background, or a process of a child's tree that writes its own pid) is
# recorded in "$TEST_TMP/*.pid"; on exit, whatever of them still runs is
# SIGKILLed before lib.sh's cleanup.

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

# pid_of FILE: waits (up to 5s) for FILE and prints the pid in it.
pid_of() { wait_until 5 has_file "$1" && head -n1 "$1"; }

