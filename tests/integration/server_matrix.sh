#!/usr/bin/env bash
# server_matrix.sh SERVER: the single-server scenarios whose outcome rests on
# what the server does, run against SERVER (RLOCK_TEST_SERVER: redis8 or
# valkey8, Debian 13's Redis 8.0 and Valkey 8.1 from the trixie root,
# distros.sh). The main run is against the host's Redis 7.0; CMake registers
# this script once per server (test_servers_redis8, test_servers_valkey8).
# Picked: every script, mode and layout (the Lua scripts, TIME, PEXPIRE),
# waking by message (pub/sub), run's acquire, renew and release, --once-per,
# history (its stream), check, the OpenMetrics status, doctor (INFO, CONFIG),
# the guide's ACL user, AUTH, Redisson's layouts. Left out: what only rlock
# decides (parsing, exit codes, the guardian, signals, terminals), topologies
# (Cluster, Sentinel: their own tests, Redis 7), TLS and the fault scenarios.
# Each script runs whole, as CTest runs it; any failure fails this entry.
set -u
SERVER=${1:?usage: server_matrix.sh redis8|valkey8}
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPTS=(
  test_core_acquire test_core_scripts test_core_status test_core_status_complete test_core_foreign
  test_core_fencing test_core_wait test_core_roundtrips
  test_mode_fair test_mode_rw test_mode_limit test_mode_several
  test_run_mutex test_run_exit test_run_renew test_run_if_unavailable test_run_once_per
  test_history test_check test_status_openmetrics test_console_doctor
  test_acl_user test_conn_auth test_redisson_compat
)

[ "$(id -u)" = 0 ] || { echo "FAIL: the server matrix needs root (the trixie root is built with mmdebstrap)"; exit 1; }
. "$HERE/distros.sh"
RLOCK_TEST_SERVER_ROOT=$(distro_root trixie) || { echo "FAIL: cannot build the Debian trixie root (above: why)"; exit 1; }
distro_use "$RLOCK_TEST_SERVER_ROOT"
export RLOCK_TEST_SERVER=$SERVER RLOCK_TEST_SERVER_ROOT

passed=0 failed=0 failures=() t_all=$SECONDS
for name in "${SCRIPTS[@]}"; do
  t0=$SECONDS
  log=$(mktemp "${TMPDIR:-/tmp}/rlock-matrix.XXXXXX")
  if timeout -k 5 300 bash "$HERE/$name.sh" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok: $SERVER: $name ($(tail -1 "$log"), $((SECONDS - t0))s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAIL: $SERVER: $name ($((SECONDS - t0))s); its output:"
    sed 's/^/  | /' "$log"
  fi
  rm -f "$log"
done
echo "$SERVER: ${#SCRIPTS[@]} scenarios in $((SECONDS - t_all))s${failures:+; failed: ${failures[*]}}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
