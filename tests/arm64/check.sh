#!/usr/bin/env bash
# The arm64 build, tested on this (amd64) machine: `./dev test --arch arm64`
# runs this inside tests/arm64/emulated.py, where arm64 programs run under
# qemu-user, once for each emulator and registration (Debian 13's qemu 10,
# flags OPF; Debian 12's qemu 7.2, flags PF). Arguments (./dev passes them;
# tests/arm64/roots.sh makes them):
#   BUILD    the cross build directory (rlock_unit, lua/)
#   DEB      the arm64 package made from it
#   SYSROOT  the arm64 root it was built against (the unit binary's libraries)
#   QEMU     the root holding the emulator (usr/libexec/qemu-binfmt/aarch64-binfmt-P)
#   TARGET   an empty directory holding a copy of a clean Debian 12 arm64 system
#            (arm64_root): the package is installed there and its binary tested
#
# 1. The package installs there (`dpkg -i`, its Depends met by a minimal
#    system), and its rlock runs there, in that system's own userland
#    (chroot), against a redis-server of this machine on loopback.
# 2. The unit tests, under qemu-aarch64 with the sysroot's libraries.
# 3. The core scenarios (ARM64_SCENARIOS) with RLOCK_BIN the installed binary:
#    the same scripts as on amd64, ARM64_JOBS at a time.
# Prints what each step found; exits non-zero when any failed.
set -uo pipefail
[ $# -eq 5 ] || { echo "usage: check.sh BUILD DEB SYSROOT QEMU TARGET" >&2; exit 64; }
BUILD=$(cd "$1" && pwd) DEB=$(readlink -f "$2") SYSROOT=$3 QEMU=$4 TARGET=$5
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# acquire and release (core_acquire, which renews too), status (core_status),
# `run` and its guardian (run_guardian; SIGTERM: run_signals; SIGKILL of rlock
# kills CMD's tree and releases: run_sigkill, run_descendants; exit codes:
# run_exit; renewal: run_renew), `-w` woken by the release message (core_wait),
# --fair (mode_fair), history, and TLS (conn_tls: mbed TLS's arithmetic is
# the machine's).
# The longest first.
ARM64_SCENARIOS=(test_conn_tls test_mode_fair test_history test_core_acquire test_core_status test_run_guardian
                 test_run_signals test_run_sigkill test_run_descendants test_run_exit test_run_renew
                 test_core_wait)
# One per core: an emulated rlock computes (qemu translates its code) where a
# native one waits, and a TLS handshake takes it ~0.1s of CPU.
ARM64_JOBS=${ARM64_JOBS:-$(nproc)}

failed=0
step() { echo "arm64: $*"; }
bad() { echo "arm64: FAIL: $*"; failed=1; }
t0=$SECONDS
EMULATOR=$(readlink -f "$QEMU/usr/libexec/qemu-binfmt/aarch64-binfmt-P")
step "under $("$EMULATOR" --version | head -1), binfmt_misc flags" \
  "$(sed -n 's/^flags: //p' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null | grep . || echo "unknown")"

# --- 1. The package in a Debian 12 arm64 system ---------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
REDIS_DIR=$(mktemp -d) LOGS=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$REDIS_DIR" >"$REDIS_DIR/log" 2>&1 &
REDIS_PID=$!
trap 'kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; rm -rf "$REDIS_DIR" "$LOGS"' EXIT
for _ in $(seq 1 200); do redis-cli -p "$PORT" PING 2>/dev/null | grep -q PONG && break; sleep 0.025; done
URL=redis://127.0.0.1:$PORT

# The system's /proc and /dev, in this namespace only (they vanish with it).
mount --rbind /proc "$TARGET/proc" && mount --rbind /dev "$TARGET/dev" || bad "mounting /proc and /dev in $TARGET"
cp "$DEB" "$TARGET/tmp/" || bad "copying the package into $TARGET"
in_target() { chroot "$TARGET" "$@"; }
# Whether the emulator lets a process be a child subreaper: Debian 12's qemu
# 7.2 refuses PR_SET_CHILD_SUBREAPER (EINVAL), and what only a subreaper gives
# does not hold there (docs/run.md): asked by the system's own perl (prctl is
# system call 167 on arm64, PR_SET_CHILD_SUBREAPER 36).
subreaper=$(in_target perl -e 'print syscall(167, 36, 1, 0, 0, 0) == 0 ? "yes" : "no ($!)"' 2>&1)
export RLOCK_NO_SUBREAPER=
case $subreaper in
  yes) step "the emulator gives PR_SET_CHILD_SUBREAPER" ;;
  "no ("*)
    RLOCK_NO_SUBREAPER=1
    # Every check of this scenario is about processes orphaned in CMD's tree.
    kept=()
    for name in "${ARM64_SCENARIOS[@]}"; do [ "$name" = test_run_descendants ] || kept+=("$name"); done
    ARM64_SCENARIOS=("${kept[@]}")
    step "NOT COVERED here: the emulator refuses PR_SET_CHILD_SUBREAPER $subreaper: test_run_descendants" \
      "is not run, and test_run_signals and test_run_guardian leave out what needs a subreaper (they say which)" ;;
  *) bad "asking the emulator for PR_SET_CHILD_SUBREAPER: $subreaper" ;;
esac
if out=$(in_target dpkg -i "/tmp/${DEB##*/}" 2>&1); then
  step "dpkg -i ${DEB##*/} in a clean Debian 12 arm64 system: installed"
else
  bad "dpkg -i ${DEB##*/} in a clean Debian 12 arm64 system: $out"
fi
status=$(in_target dpkg-query -W -f '${db:Status-Abbrev}${Version} ${Architecture}' rlock 2>&1)
[[ $status == "ii "*" arm64" ]] && step "dpkg-query: $status" || bad "dpkg-query says: $status"
step "Depends: $(dpkg-deb -f "$DEB" Depends | grep . || echo "none"); the libraries it loads:" \
  "$(readelf -d "$TARGET/usr/bin/rlock" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | grep . || echo "none")"
version=$(in_target rlock --version 2>&1) && step "in the system: $version" || bad "rlock --version there: $version"
file=$(file -b "$TARGET/usr/bin/rlock") && [[ $file == *"ARM aarch64"* ]] || bad "/usr/bin/rlock is no arm64 program: $file"
owner=$(in_target rlock -u "$URL" acquire --ttl 1m arm64-own-root 2>&1) || bad "acquire there: $owner"
held=$(in_target rlock -u "$URL" status arm64-own-root 2>&1) && [[ $held == *"held by $owner"* ]] ||
  bad "status there: $held"
# CMD is the system's own sh and uname, arm64 programs (qemu says aarch64).
ran=$(in_target rlock -u "$URL" run -w 5s arm64-own-root-run -- /bin/sh -c 'echo "$RLOCK_NAME $(uname -m)"' 2>&1)
[ "$ran" = "arm64-own-root-run aarch64" ] || bad "run there, CMD its /bin/sh: '$ran'"
in_target rlock -u "$URL" release --owner "$owner" arm64-own-root >/dev/null 2>&1 || bad "release there"
[ "$(redis-cli -p "$PORT" EXISTS arm64-own-root arm64-own-root-run)" = 0 ] || bad "locks left after release and run"
[ "$failed" = 0 ] && step "in the system's own userland: acquire, status, run (CMD its /bin/sh), release: ok"

# --- 2. Unit tests ----------------------------------------------------------------
t1=$SECONDS
if out=$("$EMULATOR" -L "$SYSROOT" "$BUILD/rlock_unit" 2>&1); then
  step "unit tests ($((SECONDS - t1))s): $(grep -E '^\[doctest\] (test cases|assertions)' <<<"$out" | tr '\n' ' ')"
else
  bad "unit tests: $(tail -30 <<<"$out")"
fi

# --- 3. The core scenarios, with the installed binary -----------------------------
export RLOCK_BIN=$TARGET/usr/bin/rlock RLOCK_LUA=$BUILD/lua RLOCK_SRC=$SRC RLOCK_BUILD_DIR=$BUILD
export RLOCK_EMULATOR=$EMULATOR
# A dynamically linked rlock loads the arm64 system's loader and C library:
# qemu looks for what a program opens in QEMU_LD_PREFIX first, here a directory
# of the system's library directories only (the whole system there would hide
# this machine's /proc from rlock behind the system's empty one, and its /etc).
if readelf -lW "$RLOCK_BIN" | grep -q 'Requesting program interpreter'; then
  export QEMU_LD_PREFIX=$LOGS/libraries
  mkdir -p "$QEMU_LD_PREFIX/usr"
  ln -s "$(readlink -f "$TARGET/lib")" "$QEMU_LD_PREFIX/lib"
  ln -s "$(readlink -f "$TARGET/usr/lib")" "$QEMU_LD_PREFIX/usr/lib"
fi
scenario() {
  local name=$1 script t=$SECONDS
  script=$(ls "$SRC"/tests/integration/"$name".sh "$SRC"/tests/chaos/"$name".sh 2>/dev/null | head -1)
  timeout 600 bash "$script" >"$LOGS/$name.log" 2>&1
  echo "$? $((SECONDS - t))" >"$LOGS/$name.rc"
}
t2=$SECONDS
pids=()
for name in "${ARM64_SCENARIOS[@]}"; do
  # At most ARM64_JOBS at a time (the server started above is no scenario).
  while [ "$(jobs -rp | grep -cvx "$REDIS_PID")" -ge "$ARM64_JOBS" ]; do wait -n; done
  scenario "$name" &
  pids+=($!)
done
wait "${pids[@]}"
checks=0 passed=0
for name in "${ARM64_SCENARIOS[@]}"; do
  read -r rc took <"$LOGS/$name.rc"
  last=$(tail -1 "$LOGS/$name.log")
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then checks=$((checks + BASH_REMATCH[1])); fi
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    printf 'arm64: ok   %-22s %4ss  %s\n' "$name" "$took" "$last"
  else
    bad "$name (exit $rc, ${took}s):"
    grep -E '^FAIL' -A2 "$LOGS/$name.log" | head -40
    tail -5 "$LOGS/$name.log"
  fi
done
step "scenarios: $passed of ${#ARM64_SCENARIOS[@]} passed ($checks checks), $((SECONDS - t2))s, $ARM64_JOBS at a time"
step "$([ "$failed" = 0 ] && echo "all passed" || echo "FAILED"), in $((SECONDS - t0))s"
exit "$failed"
