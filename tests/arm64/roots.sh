# shellcheck shell=bash
# What building and testing rlock for arm64 on an amd64 machine needs, made
# once a machine from Debian's packages and cached outside the clone (Debian
# 12 arm64 for rlock, Debian 13's and Debian 12's qemu-user-static for running
# it). Sourced by
# ./dev (package --arch arm64, test --arch arm64); needs root and mmdebstrap.
#
#   arm64_sysroot  the root the cross build compiles and links against
#                  (cmake/aarch64-linux-gnu.cmake): libc6-dev and the -dev
#                  packages of README's list, arm64, only extracted (no package
#                  script runs, nothing is emulated: seconds). DEBIAN/ holds
#                  libc6's control files (its symbols file), so that
#                  dpkg-shlibdeps, which takes the root for libc6's package
#                  tree, computes the package's Depends from arm64's libc6.
#   arm64_qemu     Debian 13's qemu-user-static (10.0), extracted (only its
#                  aarch64 emulator and binfmt rules kept).
#   arm64_qemu12   Debian 12's (7.2), the same way: what many amd64 runners
#                  and multi-arch container builds still carry. It emulates
#                  no execveat (ENOSYS) and refuses PR_SET_CHILD_SUBREAPER
#                  (EINVAL); docs/run.md says what that leaves of `run`.
#   arm64_root     a clean Debian 12 arm64 system (mmdebstrap minbase, its
#                  package scripts run under arm64_qemu through
#                  tests/arm64/emulated.py), which the package is installed
#                  into (a copy of it) by tests/arm64/check.sh.
#
# Each prints its directory, building it first when the machine has none: into
# a temporary directory renamed into place when complete (an interrupted build
# leaves nothing that looks finished), one build at a time (a lock file). The
# directory's name carries a hash of its recipe (suite, packages, this file's
# ARM64_RECIPE, the mirror): a changed recipe builds a new one and removes the
# older ones. Says why on stderr and returns non-zero when it cannot build one.

ARM64_CACHE=${RLOCK_ARM64_CACHE:-/var/cache/rlock-test/arm64}
# Raised when what a directory holds changes in a way its package list does not say.
ARM64_RECIPE=2
ARM64_SYSROOT_PACKAGES="libc6-dev libstdc++-12-dev libhiredis-dev libmbedtls-dev libfmt-dev libcli11-dev
nlohmann-json3-dev doctest-dev"

# arm64_cached KIND SUITE ARCH VARIANT PACKAGES [MMDEBSTRAP_OPTION...]: the
# cached directory of that recipe, built when missing. A caller may set the
# arrays ARM64_RUN (words mmdebstrap is run through) and ARM64_FINISH (a
# command run with the new directory last, before it is complete).
arm64_cached() {
  local kind=$1 suite=$2 arch=$3 variant=$4 packages=$5
  shift 5
  local run=("${ARM64_RUN[@]}") finish=("${ARM64_FINISH[@]}") hash dir tmp log lock old use
  hash=$(printf '%s\n' "$kind" "$suite" "$arch" "$variant" "$packages" "$ARM64_RECIPE" "$*" "${finish[*]}" \
    "${RLOCK_DEBIAN_MIRROR:-}" | sha256sum | cut -c1-12)
  dir=$ARM64_CACHE/$kind-$hash
  if [ -f "$dir/.rlock-complete" ]; then
    echo "$dir"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { echo "arm64: building the $kind needs root (mmdebstrap)" >&2; return 1; }
  command -v mmdebstrap >/dev/null || { echo "arm64: mmdebstrap is not installed" >&2; return 1; }
  mkdir -p "$ARM64_CACHE/tmp" || return 1
  exec {lock}>"$ARM64_CACHE/build.lock"
  flock "$lock"
  if [ ! -f "$dir/.rlock-complete" ]; then
    rm -rf "$ARM64_CACHE/tmp/$kind-"* # what an interrupted build left (none runs: the lock)
    tmp=$(mktemp -d "$ARM64_CACHE/tmp/$kind-$hash.XXXXXX")
    log=$tmp.log
    echo "arm64: building the $kind (Debian $suite, $arch, $variant) in $dir, once for this machine" >&2
    local t0=$SECONDS
    # No recommends: what is listed and what it needs.
    if ! "${run[@]}" mmdebstrap --variant="$variant" --arch="$arch" --aptopt='APT::Install-Recommends "false"' \
      ${packages:+--include="$(tr -s ' \n' ',,' <<<"$packages" | sed 's/,$//')"} "$@" \
      "$suite" "$tmp" ${RLOCK_DEBIAN_MIRROR:+"$RLOCK_DEBIAN_MIRROR"} >"$log" 2>&1 ||
      ! { [ ${#finish[@]} -eq 0 ] || "${finish[@]}" "$tmp" >>"$log" 2>&1; }; then
      echo "arm64: could not build the $kind (mmdebstrap); its last lines:" >&2
      tail -15 "$log" >&2
      rm -rf "$tmp" "$log"
      exec {lock}>&-
      return 1
    fi
    printf '%s\n' "$kind" "$suite" "$arch" "$variant" "$packages" "recipe $ARM64_RECIPE" >"$tmp/.rlock-complete"
    rm -f "$log"
    mv -T "$tmp" "$dir" || { rm -rf "$tmp"; exec {lock}>&-; return 1; }
    echo "arm64: the $kind took $((SECONDS - t0))s" >&2
    # Older recipes of this kind, when nothing uses them (arm64_use).
    for old in "$ARM64_CACHE/$kind"-*; do
      [ -d "$old" ] && [ "$old" != "$dir" ] || continue
      exec {use}>"$old.use"
      if flock -xn "$use"; then rm -rf "$old" "$old.use"; fi
      exec {use}>&-
    done
  fi
  exec {lock}>&-
  echo "$dir"
}

# arm64_use DIR: holds DIR for this shell's life (a shared lock): a newer
# recipe's build does not remove it meanwhile.
arm64_use() {
  local fd
  exec {fd}>"$1.use"
  flock -s "$fd"
}

arm64_sysroot() {
  # libc6's control files, from the package as downloaded (the archive is
  # cleaned after this hook).
  local ARM64_RUN=() ARM64_FINISH=()
  arm64_cached sysroot bookworm arm64 extract "$ARM64_SYSROOT_PACKAGES" \
    --extract-hook='mkdir "$1/DEBIAN" && dpkg-deb --control "$1"/var/cache/apt/archives/libc6_*_arm64.deb "$1/DEBIAN"'
}

# arm64_keep_emulator DIR: removes from DIR all but the aarch64 emulator (and
# the name binfmt_misc starts it by), its binfmt rules (systemd-binfmt's
# binfmt.d file, and update-binfmts' where the package has one) and its
# licence (qemu-user-static holds every machine's: 450 MB).
arm64_keep_emulator() {
  local start=usr/libexec/qemu-binfmt/aarch64-binfmt-P
  # (The rules may be links into usr/share/qemu: their text is kept.)
  (cd "$1" && keep=("$(realpath --relative-to=. "$start")" "$start" usr/share/doc/qemu-user*/copyright) &&
    mkdir .keep && cp -a --parents "${keep[@]}" .keep/ &&
    cp -L --parents usr/lib/binfmt.d/qemu-aarch64.conf .keep/ &&
    { [ ! -e usr/share/binfmts/qemu-aarch64 ] || cp -L --parents usr/share/binfmts/qemu-aarch64 .keep/; } &&
    find . -mindepth 1 -maxdepth 1 ! -name .keep ! -name .rlock-complete -exec rm -rf {} + &&
    mv .keep/* . && rmdir .keep && "./${keep[0]}" --version)
}

arm64_qemu() {
  local ARM64_RUN=() ARM64_FINISH=(arm64_keep_emulator)
  arm64_cached qemu trixie amd64 extract qemu-user-static
}

# (A kind of its own: a new recipe of one kind removes the others of it.)
arm64_qemu12() {
  local ARM64_RUN=() ARM64_FINISH=(arm64_keep_emulator)
  arm64_cached qemu12 bookworm amd64 extract qemu-user-static
}

arm64_root() {
  local qemu
  qemu=$(arm64_qemu) || return 1
  # The arm64 package scripts run through binfmt_misc, in emulated.py's
  # namespace where it sends arm64 programs to that qemu.
  local ARM64_RUN=(python3 "$(dirname "${BASH_SOURCE[0]}")/emulated.py" "$qemu") ARM64_FINISH=()
  arm64_cached root bookworm arm64 minbase ""
}
