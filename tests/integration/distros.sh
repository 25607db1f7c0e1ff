# Debian root file systems for the tests that run rlock, or a server, as a
# Debian release has it: test_pkg_distros (the package on Debian 12 and 13),
# the server matrix (server_matrix.sh: trixie's Redis 8 and Valkey 8).
# Sourced; needs root and mmdebstrap (./dev test installs it).
#
# distro_root SUITE: prints the path of SUITE's root (bookworm, trixie),
# building it first when this machine has none: `mmdebstrap --variant=minbase`
# with distro_packages SUITE, into a temporary directory renamed into place
# when complete, so an interrupted build leaves nothing that looks finished.
# The roots live outside the clone, in RLOCK_ROOTS_CACHE (default
# /var/cache/rlock-test): a machine downloads them once. A root's directory
# name carries a hash of what it was built from (suite, packages, this recipe's
# version): a changed list builds a new root, and the old ones are removed when
# no test uses them. Prints why on stderr and returns non-zero when it cannot
# build one (no root, no mmdebstrap, no archive): never a silent skip.
#
# distro_use ROOT: holds ROOT for this shell's life (a shared lock): a newer
# recipe's build does not remove it under a running test.

RLOCK_ROOTS_CACHE=${RLOCK_ROOTS_CACHE:-/var/cache/rlock-test}
# Raised when what a root holds changes in a way the package lists do not say.
DISTRO_RECIPE=1

# The packages each root gets besides minbase. Debian 12: the myhostname
# module (the hosts: line that crashed the static binary there; resolve and
# mdns stay absent modules). Debian 13: the name-service modules a desktop or
# systemd-resolved install brings (their postinst write trixie's default
# hosts: line) and the servers users run there, Redis 8.0 and Valkey 8.1.
distro_packages() {
  case "$1" in
    bookworm) echo libnss-myhostname ;;
    trixie) echo libnss-resolve libnss-myhostname libnss-mdns redis-server valkey-server ;;
    *) return 1 ;;
  esac
}

distro_root() {
  local suite=$1 packages hash dir tmp lock log
  packages=$(distro_packages "$suite") || { echo "distro_root: no recipe for '$suite'" >&2; return 1; }
  hash=$(printf '%s\n' "$suite" "$packages" "$DISTRO_RECIPE" "${RLOCK_DEBIAN_MIRROR:-}" | sha256sum | cut -c1-12)
  dir=$RLOCK_ROOTS_CACHE/roots/$suite-$hash
  if [ -f "$dir/.rlock-root-complete" ]; then
    echo "$dir"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { echo "distro_root: building a $suite root needs root (mmdebstrap, chroot)" >&2; return 1; }
  command -v mmdebstrap >/dev/null ||
    { echo "distro_root: mmdebstrap is not installed (./dev test installs it)" >&2; return 1; }
  mkdir -p "$RLOCK_ROOTS_CACHE/roots" "$RLOCK_ROOTS_CACHE/tmp" || return 1
  # One build at a time on this machine; whoever waited finds it done.
  exec {lock}>"$RLOCK_ROOTS_CACHE/build.lock"
  flock "$lock"
  if [ ! -f "$dir/.rlock-root-complete" ]; then
    # What an interrupted build left (none runs now: this shell holds the lock).
    rm -rf "$RLOCK_ROOTS_CACHE"/tmp/*
    tmp=$(mktemp -d "$RLOCK_ROOTS_CACHE/tmp/$suite-$hash.XXXXXX")
    log=$tmp.log
    echo "distro_root: building the $suite root ($packages) in $dir, once for this machine" >&2
    # The mirror: mmdebstrap's default Debian mirror unless RLOCK_DEBIAN_MIRROR
    # names another. No recommends: the roots hold what is listed, and its needs.
    if ! mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' \
      --include="$(tr ' ' ',' <<<"$packages")" "$suite" "$tmp" ${RLOCK_DEBIAN_MIRROR:+"$RLOCK_DEBIAN_MIRROR"} \
      >"$log" 2>&1; then
      echo "distro_root: mmdebstrap could not build the $suite root; its last lines:" >&2
      tail -15 "$log" >&2
      rm -rf "$tmp" "$log"
      flock -u "$lock"; exec {lock}>&-
      return 1
    fi
    printf '%s\n' "$suite" "$packages" >"$tmp/.rlock-root-complete"
    rm -f "$log"
    mv -T "$tmp" "$dir" || { rm -rf "$tmp"; flock -u "$lock"; exec {lock}>&-; return 1; }
    # Older recipes of this suite, when no test holds them.
    local old use
    for old in "$RLOCK_ROOTS_CACHE/roots/$suite"-*; do
      [ -d "$old" ] && [ "$old" != "$dir" ] || continue
      exec {use}>"$old.use"
      if flock -xn "$use"; then rm -rf "$old" "$old.use"; fi
      exec {use}>&-
    done
  fi
  flock -u "$lock"
  exec {lock}>&-
  echo "$dir"
}

distro_use() {
  local fd
  exec {fd}>"$1.use"
  flock -s "$fd"
}

# distro_server_cmd ROOT PROGRAM: the words that run ROOT's PROGRAM (e.g.
# redis-server) on this host: ROOT's own dynamic loader and libraries, the
# host's file system otherwise (its --dir, unix socket and certificate paths
# are the test's own). The same program, libraries and C library as
# `chroot ROOT PROGRAM` runs.
distro_server_cmd() {
  local root=$1 program=$2 libdir=$1/usr/lib/x86_64-linux-gnu
  [ -x "$root/usr/bin/$program" ] && [ -x "$libdir/ld-linux-x86-64.so.2" ] ||
    { echo "distro_server_cmd: no $program in $root" >&2; return 1; }
  printf '%s\n' "$libdir/ld-linux-x86-64.so.2" --library-path "$libdir" "$root/usr/bin/$program"
}
