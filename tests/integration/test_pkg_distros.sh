#!/usr/bin/env bash
# The Debian package on the releases its users run: the .deb built here
# (cpack, as test_pkg builds it; RLOCK_DEB=PATH tests a given one) installed
# with dpkg in Debian 12 (bookworm) and Debian 13 (trixie) roots (distros.sh:
# mmdebstrap, cached under /var/cache/rlock-test), and run there with chroot
# against a redis-server on the host's loopback (chroot keeps the network),
# under each hosts: line of issue 29 in each root's nsswitch.conf, for
# `localhost`, a name from the root's /etc/hosts and a name that does not
# exist. A name resolves when the root's `getent ahosts` finds it, and then
# connects (exit 0); one that does not is exit 69,
# "cannot resolve NAME"; no case ends in a signal (a static C library crashed
# loading the host's name-service modules: SIGFPE on trixie, SIGSEGV with
# bookworm's myhostname). Then, for the missing name under each root's default
# line: status 69, check a Monitoring Plugins UNKNOWN, run --if-unavailable run
# runs CMD.
# Root only (chroot, mounts); it fails, saying why, where it cannot build the
# roots. Each root is used through an overlay in a mount namespace of the
# test's own: the cache stays as built, and nothing stays mounted.
if [ "${RLOCK_DISTROS_NS:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "FAIL: test_pkg_distros needs root (chroot, overlay mounts); CI runs as root"; exit 1; }
  command -v unshare >/dev/null || { echo "FAIL: unshare (util-linux) is not installed"; exit 1; }
  exec env RLOCK_DISTROS_NS=1 unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/distros.sh"
BUILD=${RLOCK_BUILD_DIR:-$(dirname "$RLOCK")}

MOUNTS=()
unmount_roots() {
  local m
  for m in "${MOUNTS[@]}"; do umount -R "$m" 2>/dev/null; done
  MOUNTS=()
}
trap 'unmount_roots; cleanup' EXIT

# --- The package ------------------------------------------------------------
if [ -n "${RLOCK_DEB:-}" ]; then
  DEB=$RLOCK_DEB
else
  for tool in cpack dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (./dev installs what the tests need)"; exit 1; }
  done
  cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$TEST_TMP/pkg" >"$TEST_TMP/cpack.log" 2>&1 ||
    { echo "FAIL: cpack could not build the package"; tail -5 "$TEST_TMP/cpack.log"; exit 1; }
  DEB=$(ls "$TEST_TMP"/pkg/rlock_*.deb)
fi
[ -f "$DEB" ] || { echo "FAIL: no package at $DEB"; exit 1; }
echo "package: $DEB, Depends: $(dpkg-deb -f "$DEB" Depends)"

# Nothing answers DNS inside the roots: 127.0.0.1:53, where nothing may listen,
# one try of at most 1 s. A name that is not in /etc/hosts fails at once, and
# no query leaves the machine.
command -v ss >/dev/null || { echo "FAIL: ss (iproute2) is not installed (./dev installs what the tests need)"; exit 1; }
if ss -Hlnu 'sport = :53' | grep -q . || ss -Hlnt 'sport = :53' | grep -q .; then
  echo "FAIL: something listens on port 53 here; the roots' resolv.conf points at 127.0.0.1:53 to fail fast"
  ss -Hlnut 'sport = :53'
  exit 1
fi

start_redis
PORT=$REDIS_PORT
HOSTS_NAME=redis.internal
MISSING=no-such-host.invalid

# The hosts: lines of issue 29: trixie's default with systemd-resolved, myhostname
# and mdns installed (each root's own default is tried too), and the others that
# crashed the static binary.
LINES=(
  "files myhostname mdns4_minimal [NOTFOUND=return] resolve [!UNAVAIL=return] dns"
  "files resolve [!UNAVAIL=return] dns"
  "files myhostname dns"
  "mdns4_minimal files dns"
  "hesiod files dns"
  "myhostname files dns"
  "files dns"
)

TABLE=()
signals=0
# prepare_root SUITE: the cached root, overlaid at $TEST_TMP/SUITE/root, the
# package installed with dpkg (which checks its Depends against the root's
# libc6), /etc/hosts, resolv.conf and /proc set up. Sets ROOT and DEFAULT_LINE.
prepare_root() {
  local suite=$1 cached dir=$TEST_TMP/$1
  cached=$(distro_root "$suite") || { echo "FAIL: cannot build the Debian $suite root (above: why); this test needs it"; exit 1; }
  distro_use "$cached"
  mkdir -p "$dir/upper" "$dir/work" "$dir/root"
  mount -t overlay overlay -o "lowerdir=$cached,upperdir=$dir/upper,workdir=$dir/work" "$dir/root" ||
    { echo "FAIL: cannot mount an overlay over $cached"; exit 1; }
  ROOT=$dir/root
  MOUNTS+=("$ROOT")
  mount -t proc proc "$ROOT/proc" || { echo "FAIL: cannot mount /proc in the $suite root"; exit 1; }
  echo "$suite: $(cat "$ROOT/etc/debian_version"), $(chroot "$ROOT" dpkg-query -W -f='libc6 ${Version}' libc6)"
  cp "$DEB" "$ROOT/tmp/rlock.deb"
  chroot "$ROOT" dpkg -i /tmp/rlock.deb >"$dir/dpkg.log" 2>&1
  RC=$? OUT=$(tail -3 "$dir/dpkg.log") ERR=
  expect_rc 0 "$suite: dpkg -i installs the package (its Depends met by the root's libc6)"
  DEFAULT_LINE=$(sed -n 's/^hosts:[[:space:]]*//p' "$ROOT/etc/nsswitch.conf")
  echo "$suite: the root's own hosts: line: $DEFAULT_LINE"
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n127.0.0.1 %s\n' "$HOSTS_NAME" >"$ROOT/etc/hosts"
  rm -f "$ROOT/etc/resolv.conf"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$ROOT/etc/resolv.conf"
}

set_hosts_line() { sed -i "s/^hosts:.*/hosts: $1/" "$ROOT/etc/nsswitch.conf"; }

# in_root ARG...: /usr/bin/rlock in the root, bounded: sets RC, OUT, ERR.
in_root() {
  timeout -k 2 30 chroot "$ROOT" /usr/bin/rlock "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
  RC=$?
  OUT=$(cat "$TEST_TMP/out")
  ERR=$(cat "$TEST_TMP/err")
}

# result RC: "ok", "exit N" or "SIGNAME (exit N)".
result() {
  if [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
    echo "SIG$(kill -l $(($1 - 128))) (exit $1)"
  elif [ "$1" = 0 ]; then
    echo "ok"
  else
    echo "exit $1"
  fi
}

lookup_matrix() {
  local suite=$1 line name t0 took
  local lines=("$DEFAULT_LINE")
  for line in "${LINES[@]}"; do [ "$line" = "$DEFAULT_LINE" ] || lines+=("$line"); done
  for line in "${lines[@]}"; do
    set_hosts_line "$line"
    for name in localhost "$HOSTS_NAME" "$MISSING"; do
      t0=$(ms)
      in_root -u "redis://$name:$PORT" status
      took=$(($(ms) - t0))
      TABLE+=("$suite | $line$([ "$line" = "$DEFAULT_LINE" ] && echo " (root's default)") | $name | $(result "$RC")")
      [ "$RC" -gt 128 ] && signals=$((signals + 1))
      # The root's own lookup, through the same nsswitch.conf: rlock connects
      # exactly when getent finds the name.
      local got
      got=$(timeout -k 2 30 chroot "$ROOT" getent ahosts "$name" | awk 'NR == 1 { print $1 }')
      check "$suite, hosts: $line: rlock resolves $name as getent ahosts does (${got:-not found})" \
        test "$([ -n "$got" ] && echo 0 || echo 69)" = "$RC"
      if [ "$name" = "$MISSING" ]; then
        expect_rc 69 "$suite, hosts: $line: $name does not resolve: exit 69 ($took ms)"
        check "$suite, hosts: $line: 'cannot resolve $name' ($ERR)" grep -q "cannot resolve $name" <<<"$ERR"
      else
        expect_rc 0 "$suite, hosts: $line: $name resolves and connects ($took ms)"
      fi
    done
  done
}

# What users see for a name that does not resolve, under the root's own line
# and the line that crashed on bookworm.
unresolved_behaviour() {
  local suite=$1 line
  for line in "$DEFAULT_LINE" "myhostname files dns"; do
    set_hosts_line "$line"
    in_root -u "redis://$MISSING:$PORT" status X
    expect_rc 69 "$suite, hosts: $line: status of an unresolved server: 69"
    in_root -u "redis://$MISSING:$PORT" check X
    expect_rc 3 "$suite, hosts: $line: check: Monitoring Plugins UNKNOWN (3)"
    check "$suite: check says it in one line: $OUT" grep -qx "RLOCK UNKNOWN - .*cannot resolve $MISSING.*" <<<"$OUT"
    rm -f "$ROOT/tmp/ran"
    in_root -u "redis://$MISSING:$PORT" run --if-unavailable run X -- sh -c 'echo "$RLOCK_UNLOCKED" >/tmp/ran; exit 7'
    expect_rc 7 "$suite, hosts: $line: run --if-unavailable run runs CMD without the lock, CMD's exit status"
    check "$suite: CMD ran, RLOCK_UNLOCKED=1" test "$(cat "$ROOT/tmp/ran" 2>/dev/null)" = 1
    # And with the server there: a real run in the root, through a name.
    in_root -u "redis://$HOSTS_NAME:$PORT" run "distro-$suite" -- sh -c 'echo "$RLOCK_NAME" >/tmp/ran'
    expect_rc 0 "$suite, hosts: $line: run through $HOSTS_NAME takes the lock and runs CMD"
    check "$suite: CMD ran under the lock" test "$(cat "$ROOT/tmp/ran" 2>/dev/null)" = "distro-$suite"
    check "$suite: the lock is released after the run" key_gone "distro-$suite"
  done
}

for suite in bookworm trixie; do
  prepare_root "$suite"
  lookup_matrix "$suite"
  unresolved_behaviour "$suite"
  set_hosts_line "$DEFAULT_LINE"
done

echo
echo "hosts: line x distribution x name -> rlock -u redis://NAME:PORT status"
printf '  %s\n' "${TABLE[@]}"
check "no case ended in a signal ($signals did)" test "$signals" = 0
finish
