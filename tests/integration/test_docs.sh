#!/usr/bin/env bash
# The man page, the completions and --help agree with the binary: the man page
# renders without a groff warning, both completion scripts parse, the bash one
# completes subcommands, per-subcommand flags and --on-lost values, and every
# long flag a subcommand's --help shows is in the man page and the completions.
. "$(dirname "$0")/lib.sh"
ROOT=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MAN=$ROOT/man/rlock.1
BASHC=$ROOT/completions/rlock.bash
ZSHC=$ROOT/completions/_rlock

command -v groff >/dev/null || { echo "FAIL: groff is not installed (./dev installs groff-base)"; exit 1; }
command -v zsh >/dev/null || { echo "FAIL: zsh is not installed (./dev installs it)"; exit 1; }

warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
check "man page renders without warnings${warnings:+: $warnings}" test -z "$warnings"
rendered=$(groff -man -Tutf8 "$MAN" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')
check "bash completion parses" bash -n "$BASHC"
check "zsh completion parses" zsh -n "$ZSHC"

complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rlock; echo "${COMPREPLY[*]}"' _ "$BASHC" "$@"
}
has_words() { local got=" $1 " w; shift; for w in "$@"; do [[ $got == *" $w "* ]] || return 1; done; }
check "bash completes the subcommands" has_words "$(complete_words rlock '')" acquire release renew status force-unlock run
check "bash completes run's flags" has_words "$(complete_words rlock run --)" --ttl --on-lost --kill-after --hold-min --max-hold
check "bash completes --on-lost values" has_words "$(complete_words rlock run X --on-lost '')" term kill ignore
check "bash completes acquire's flags after a global flag" has_words "$(complete_words rlock -u redis://x acquire --)" --ttl --wait --owner
check "bash completes a command after run's --" has_words "$(complete_words rlock run X -- bas)" bash

for sub in "" acquire release renew status force-unlock run; do
  help=$("$RLOCK" $sub --help 2>&1)
  for flag in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
    check "'rlock $sub --help' flag $flag is in the man page" grep -qF -- "$flag" <<<"$rendered"
    check "'rlock $sub --help' flag $flag is in the bash completion" grep -qF -- "$flag" "$BASHC"
    check "'rlock $sub --help' flag $flag is in the zsh completion" grep -qF -- "$flag" "$ZSHC"
  done
  [ -n "$sub" ] && check "the man page describes '$sub'" grep -qE "^ +$sub( |$)" <<<"$rendered"
done
finish
