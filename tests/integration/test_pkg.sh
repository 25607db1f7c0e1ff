#!/usr/bin/env bash
# rlock as a system tool: `cpack -G DEB` packs the binary, the gzipped man page,
# the guide (README.md and docs/ under /usr/share/doc/rlock)
# and the bash, zsh and fish completions at the paths Debian's tools look in;
# the package's Depends agrees with the NEEDED entries of the binary it ships
# (only the C library is the host's);
# that binary runs and names the git revision it was built from; the fish
# completion parses; bash and fish complete lock names from a live server, and
# bash completes nothing, within a second, when no server answers.
# Nothing is installed: the package is built and unpacked under TEST_TMP.
. "$(dirname "$0")/lib.sh"
ROOT=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${RLOCK_BUILD_DIR:-$(dirname "$RLOCK")}
BASHC=$ROOT/completions/rlock.bash
FISHC=$ROOT/completions/rlock.fish

for tool in cpack dpkg-deb dpkg-shlibdeps readelf fish gzip git; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (./dev installs what the tests need)"; exit 1; }
done
[ -f "$BUILD/CPackConfig.cmake" ] || { echo "FAIL: no CPackConfig.cmake in $BUILD (set RLOCK_BUILD_DIR)"; exit 1; }

# --- The package ------------------------------------------------------------
PKG_DIR=$TEST_TMP/pkg
t0=$(ms)
cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$PKG_DIR" >"$TEST_TMP/cpack.log" 2>&1
RC=$? OUT=$(tail -5 "$TEST_TMP/cpack.log") ERR=
expect_rc 0 "cpack -G DEB builds a package in $(($(ms) - t0)) ms"
shopt -s nullglob
debs=("$PKG_DIR"/rlock_*.deb)
shopt -u nullglob
[ ${#debs[@]} -eq 1 ] || { echo "FAIL: expected one rlock_*.deb in $PKG_DIR, found ${#debs[@]}"; exit 1; }
DEB=${debs[0]}
echo "package: $(basename "$DEB"), $(stat -c %s "$DEB") bytes"

VERSION=$("$RLOCK" --version --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
field() { dpkg-deb -f "$DEB" "$1"; }
check "Package is rlock" test "$(field Package)" = rlock
check "Version is the binary's version ($VERSION)" test "$(field Version)" = "$VERSION"
check "Architecture is dpkg's ($(dpkg --print-architecture))" test "$(field Architecture)" = "$(dpkg --print-architecture)"
check "Section is utils" test "$(field Section)" = utils
check "Maintainer is set" test -n "$(field Maintainer)"
check "Description is set" test -n "$(field Description)"

LISTING=$(dpkg-deb -c "$DEB")
listed() { grep -qE "^$1 root/root +[0-9]+ [0-9-]+ [0-9:]+ \./usr/$2\$" <<<"$LISTING"; }
check "the package holds the binary at /usr/bin/rlock (executable)" listed -rwxr-xr-x bin/rlock
check "the package holds the man page at /usr/share/man/man1/rlock.1.gz" listed -rw-r--r-- share/man/man1/rlock.1.gz
check "the package holds the bash completion at /usr/share/bash-completion/completions/rlock" \
  listed -rw-r--r-- share/bash-completion/completions/rlock
check "the package holds the zsh completion at /usr/share/zsh/vendor-completions/_rlock" \
  listed -rw-r--r-- share/zsh/vendor-completions/_rlock
check "the package holds the fish completion at /usr/share/fish/vendor_completions.d/rlock.fish" \
  listed -rw-r--r-- share/fish/vendor_completions.d/rlock.fish

X=$TEST_TMP/x
dpkg-deb -x "$DEB" "$X"
check "the man page is gzipped without a name or time stamp (gzip -n), the page as written" \
  cmp -s <(gzip -dc "$X/usr/share/man/man1/rlock.1.gz") "$ROOT/man/rlock.1"
check "gzip -n: no time stamp in the man page's header" test "$(od -An -tu4 -j4 -N4 "$X/usr/share/man/man1/rlock.1.gz" | tr -d ' ')" = 0
check "the packed bash completion is completions/rlock.bash" cmp -s "$X/usr/share/bash-completion/completions/rlock" "$BASHC"
check "the packed zsh completion is completions/_rlock" cmp -s "$X/usr/share/zsh/vendor-completions/_rlock" "$ROOT/completions/_rlock"
check "the packed fish completion is completions/rlock.fish" cmp -s "$X/usr/share/fish/vendor_completions.d/rlock.fish" "$FISHC"
# The guide the man page points to (/usr/share/doc/rlock/docs/), every page as written.
check "the package holds the README at /usr/share/doc/rlock/README.md" listed -rw-r--r-- share/doc/rlock/README.md
check "the packed README is README.md" cmp -s "$X/usr/share/doc/rlock/README.md" "$ROOT/README.md"
for page in "$ROOT"/docs/*.md; do
  page=${page##*/}
  check "the package holds docs/$page at /usr/share/doc/rlock/docs/$page, as written" \
    eval 'listed -rw-r--r-- "share/doc/rlock/docs/$page" && cmp -s "$X/usr/share/doc/rlock/docs/$page" "$ROOT/docs/$page"'
done

# Depends against what the packed binary loads: the host's C library (NEEDED
# libc.so.6), everything else inside; dpkg-shlibdeps' answer, plus the glibc
# that packed relocations need (GLIBC_ABI_DT_RELR, no symbol of its own).
NEEDED=$(readelf -d "$X/usr/bin/rlock" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
DEPENDS=$(field Depends)
echo "NEEDED: $(tr "\n" " " <<<"${NEEDED:-none}"); Depends: ${DEPENDS:-none}"
check "the binary loads the host's C library (NEEDED libc.so.6)" grep -qx 'libc.so.6' <<<"$NEEDED"
check "nothing else but glibc's own libraries: mbed TLS, hiredis, libstdc++ and libgcc are inside ($(tr '\n' ' ' <<<"$NEEDED"))" \
  test -z "$(grep -vxE 'libc\.so\.6|libm\.so\.6|ld-linux[-a-z0-9_.]*\.so\.[0-9]+' <<<"$NEEDED")"
check "Depends names libc6 with a version (dpkg-shlibdeps): $DEPENDS" grep -qE '(^|, )libc6 \(>= [0-9.]+\)' <<<"$DEPENDS"
check "Depends names no other package" test -z "$(tr ',' '\n' <<<"$DEPENDS" | grep -v '^ *libc6 ')"
if readelf -V "$X/usr/bin/rlock" | grep -q 'Name: GLIBC_ABI_DT_RELR'; then
  check "packed relocations (GLIBC_ABI_DT_RELR): Depends asks for libc6 >= 2.36" grep -q 'libc6 (>= 2.36)' <<<"$DEPENDS"
fi
# The highest version asked for is the C library this package needs.
LIBC_FLOOR=$(grep -oE 'libc6 \(>= [0-9.]+\)' <<<"$DEPENDS" | sed -E 's/.*>= ([0-9.]+)\)/\1/' | sort -V | tail -1)
check "README's install section names the C library the package asks for (glibc $LIBC_FLOOR)" \
  grep -q "glibc $LIBC_FLOOR" "$ROOT/README.md"

# --- The packed binary and its revision -------------------------------------
r "$X/usr/bin/rlock" --version
expect_rc 0 "the packed binary runs: $OUT"
check "--version: 'rlock VERSION (git REVISION)'" grep -qE "^rlock $VERSION \(git ([0-9a-f]{4,}(-dirty)?|unknown)\)$" <<<"$OUT"
r "$X/usr/bin/rlock" --version --json
check "--version --json: version and revision as fields" python3 -c '
import json, sys
doc = json.loads(sys.argv[1])
assert list(doc) == ["version", "revision"] and doc["version"] == sys.argv[2], doc
assert sys.argv[3] == "rlock %s (git %s)" % (doc["version"], doc["revision"]), sys.argv[3]
' "$OUT" "$VERSION" "$("$X/usr/bin/rlock" --version)"
REVISION=$(jget "$OUT" revision)
if [ "$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$ROOT" && pwd -P)" ]; then
  HEAD=$(git -C "$ROOT" rev-parse --short HEAD)
  check "--version names the revision of the checkout it was built from ($HEAD)" test "${REVISION%-dirty}" = "$HEAD"
else
  check "--version says 'unknown' when not built from a git checkout" test "$REVISION" = unknown
fi

# --- Completions -------------------------------------------------------------
check "fish -n accepts the fish completion" fish -n "$FISHC"

start_redis
for name in pkg-alpha pkg-beta 'pkg gamma' 'pkg-$(touch pwned)' job:nightly other; do
  "$RLOCK" acquire --ttl 1m "$name" >/dev/null || { echo "FAIL: could not take lock $name"; exit 1; }
done
BIN_DIR=$(dirname "$RLOCK")
# complete WORD...: what `_rlock` puts in COMPREPLY for the line WORD... (the
# last word is the one being completed), one a line, with the built rlock
# first in PATH, in a non-interactive bash run in TEST_TMP.
complete_words() {
  (cd "$TEST_TMP" && PATH="$BIN_DIR:$PATH" bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _rlock; printf "%s\n" "${COMPREPLY[@]}"' _ "$BASHC" "$@")
}
sorted_lines() { printf '%s\n' "$@" | sort; }
got=$(complete_words rlock release pkg-a | sort)
check "bash completes a lock name on the server: $got" test "$got" = pkg-alpha
got=$(complete_words rlock status pkg | sort)
check "bash completes every name with the prefix, escaped for the shell: $(tr '\n' ' ' <<<"$got")" \
  test "$got" = "$(sorted_lines 'pkg\ gamma' 'pkg-\$\(touch\ pwned\)' pkg-alpha pkg-beta)"
for sub in acquire renew force-unlock run; do
  check "bash completes names after $sub" test "$(complete_words rlock "$sub" pkg-b)" = pkg-beta
done
check "bash completes no name for doctor" test -z "$(complete_words rlock doctor pkg)"
check "bash completes commands, not names, after run's --" \
  test -z "$(complete_words rlock run X -- pkg-a)"
got=$(RLOCK_URL=redis://127.0.0.1:1 complete_words rlock -u "redis://127.0.0.1:$REDIS_PORT" status pkg-a)
check "bash asks the server of -u given on the line (not RLOCK_URL): $got" test "$got" = pkg-alpha
# As bash calls it without bash-completion: COMP_WORDS split at ':' as well,
# COMP_LINE whole; bash replaces only what follows the word's last ':'.
complete_line() {
  (cd "$TEST_TMP" && PATH="$BIN_DIR:$PATH" bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#COMP_LINE}
    COMP_WORDS=(${COMP_LINE//:/ : }); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _rlock; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$BASHC" "$1")
}
got=$(RLOCK_URL=redis://127.0.0.1:1 complete_line "rlock -u redis://127.0.0.1:$REDIS_PORT status job:n")
check "bash, from the whole line: the URL's and the name's ':' split nothing; the reply follows the ':' ($got)" \
  test "$got" = nightly
got=$(cd "$TEST_TMP" && PATH="$BIN_DIR:$PATH" fish -c 'source $argv[1]; complete -C "rlock release pkg-"' "$FISHC" |
  cut -f1 | sort)
check "fish completes lock names on the server: $(tr '\n' ' ' <<<"$got")" \
  test "$got" = "$(sorted_lines 'pkg-$(touch pwned)' pkg-alpha pkg-beta)"
check "a name's \$(...) is never run by the bash or fish completion" test ! -e "$TEST_TMP/pwned"

# A server with a password: the --password-file on the line goes along.
REDIS_AUTH_ARGS="-a completion-secret --no-auth-warning" # for rcli (start_redis pings with it)
start_redis --requirepass completion-secret
printf 'completion-secret\n' >"$TEST_TMP/pw" && chmod 600 "$TEST_TMP/pw"
"$RLOCK" --password-file "$TEST_TMP/pw" acquire --ttl 1m pkg-locked >/dev/null || { echo "FAIL: no lock taken"; exit 1; }
got=$(complete_words rlock --password-file "$TEST_TMP/pw" status pkg-)
check "bash passes the --password-file on the line along ($got)" test "$got" = pkg-locked
check "bash: no password, no names" test -z "$(complete_words rlock status pkg-)"

CLOSED=$(free_port)
t0=$(ms)
got=$(RLOCK_URL=redis://127.0.0.1:$CLOSED complete_words rlock release pkg)
took=$(($(ms) - t0))
check "no server (a closed port): bash completes nothing ($got)" test -z "$got"
# Its own timeouts bound it (--connect-timeout 300ms, --io-timeout 500ms); an
# idle machine takes ~20ms.
check "no server: the completion returns within its timeouts (took $took ms < 800ms + SLACK_MS)" test "$took" -lt $(( 800 + SLACK_MS ))
t0=$(ms)
r -u "redis://127.0.0.1:$CLOSED" --connect-timeout 300ms --io-timeout 500ms -q status --names
took=$(($(ms) - t0))
check "no server: status --names prints nothing on stdout" test -z "$OUT"
check "no server: status --names fails (rc $RC) within its timeouts (took $took ms < 800ms + SLACK_MS)" test "$RC" -ne 0 -a "$took" -lt $(( 800 + SLACK_MS ))
finish
