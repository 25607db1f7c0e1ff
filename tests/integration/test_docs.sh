#!/usr/bin/env bash
# The man page, the completions and --help agree with the binary: the man page
# renders without a groff warning, the three completion scripts parse, the bash
# one completes subcommands, per-subcommand flags and --on-lost values, every
# long flag a subcommand's --help shows is in the man page and the completions
# (bash and fish: offered after that subcommand), and every flag a completion
# offers is one rlock knows (its --help shows it). The documentation keeps its
# layout: a README of at most 300 lines that links every page of docs/, links
# that lead somewhere, no passage written in two of README, docs/ and the man
# page, every variable rlock reads or sets and every exit status --help names
# described in the man page, and no test naming a .md file that is gone.
. "$(dirname "$0")/lib.sh"
ROOT=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MAN=$ROOT/man/rlock.1
BASHC=$ROOT/completions/rlock.bash
ZSHC=$ROOT/completions/_rlock
FISHC=$ROOT/completions/rlock.fish

command -v groff >/dev/null || { echo "FAIL: groff is not installed (./dev installs groff-base)"; exit 1; }
command -v zsh >/dev/null || { echo "FAIL: zsh is not installed (./dev installs it)"; exit 1; }
command -v fish >/dev/null || { echo "FAIL: fish is not installed (./dev installs it)"; exit 1; }

warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
check "man page renders without warnings${warnings:+: $warnings}" test -z "$warnings"
rendered=$(groff -man -Tutf8 "$MAN" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')
check "bash completion parses" bash -n "$BASHC"
check "zsh completion parses" zsh -n "$ZSHC"
check "fish completion parses" fish -n "$FISHC"

complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rlock; echo "${COMPREPLY[*]}"' _ "$BASHC" "$@"
}
has_words() { local got=" $1 " w; shift; for w in "$@"; do [[ $got == *" $w "* ]] || return 1; done; }
# The subcommands, from the binary's own table (the "Subcommands:" part of
# --help), never a list written here.
subcommands=$("$RLOCK" --help | sed -n '/^Subcommands:/,/^$/p' | grep -oE '^  [a-z][a-z-]*' | tr -d ' ')
check "rlock --help lists the subcommands (got: $(tr '\n' ' ' <<<"$subcommands"))" test -n "$subcommands"
check "bash completes the subcommands" has_words "$(complete_words rlock '')" $subcommands
check "bash completes run's flags" has_words "$(complete_words rlock run --)" --ttl --on-lost --kill-after --hold-min --max-hold
check "bash completes --on-lost values" has_words "$(complete_words rlock run X --on-lost '')" term kill ignore
check "bash completes acquire's flags after a global flag" has_words "$(complete_words rlock -u redis://x acquire --)" --ttl --wait --owner
check "bash completes a command after run's --" has_words "$(complete_words rlock run X -- bas)" bash

# The long flags a completion offers after `rlock [SUB] --`, one a line.
bash_offers() { complete_words rlock "$@" -- | tr ' ' '\n' | grep -E -- '^--[a-z]' | sort -u; }
fish_offers() {
  fish -c 'source $argv[1]; complete -C "rlock $argv[2..-1] --"' "$FISHC" "$@" | cut -f1 |
    grep -E -- '^--[a-z]' | sort -u
}
# The long flags of an --help's option lines (not those its prose mentions).
help_options() { grep -oE -- '^ +(-[a-zA-Z], ?)?--[a-z][a-z-]+' | grep -oE -- '--[a-z][a-z-]+' | sort -u; }
in_list() { grep -qxF -- "$1" <<<"$2"; }

known=""
offered=""
for sub in "" $subcommands; do
  help=$("$RLOCK" $sub --help 2>&1)
  known+=$(help_options <<<"$help")$'\n'
  for flag in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
    check "'rlock $sub --help' flag $flag is in the man page" grep -qF -- "$flag" <<<"$rendered"
    check "'rlock $sub --help' flag $flag is in the bash completion" grep -qF -- "$flag" "$BASHC"
    check "'rlock $sub --help' flag $flag is in the zsh completion" grep -qF -- "$flag" "$ZSHC"
  done
  bash_got=$(bash_offers $sub)
  fish_got=$(fish_offers $sub)
  for flag in $(help_options <<<"$help"); do
    check "'rlock $sub --help' option $flag: bash offers it after 'rlock $sub'" in_list "$flag" "$bash_got"
    check "'rlock $sub --help' option $flag: fish offers it after 'rlock $sub'" in_list "$flag" "$fish_got"
  done
  offered+=$bash_got$'\n'$fish_got$'\n'
  [ -n "$sub" ] && check "the man page describes '$sub'" grep -qE "^ +$sub( |$)" <<<"$rendered"
done

# The other way: a flag a completion offers is one rlock knows. zsh's are read
# from its _arguments specs ('--ttl=[...', '{-w+,--wait=}', '--fair[...').
offered+=$(grep -oE -- "--[a-z][a-z-]+(=?\[|=?})" "$ZSHC" | grep -oE -- '--[a-z][a-z-]+')
for flag in $(sort -u <<<"$offered"); do
  check "completion flag $flag is one rlock knows (in some --help)" in_list "$flag" "$known"
done

# --- The documentation's layout: README guides, docs/ explains, the man page specifies.
# layout CHECK [ARG]: sets problems to what docs_layout.py found, one a line (or
# to why it could not look: a helper that crashes is a failed check, not a pass).
layout() {
  problems=$("$PY" "$(dirname "$0")/docs_layout.py" "$1" "$ROOT" "${@:2}" 2>&1)
  local rc=$?
  [ $rc -eq 0 ] || problems="docs_layout.py $1 failed (rc $rc): $problems"
}
readme_lines=$(wc -l <"$ROOT/README.md")
check "README.md has at most 300 lines (has $readme_lines; the rest belongs in docs/)" test "$readme_lines" -le 300
check "README.md names the test command CI runs (.ci/run: ./dev test)" \
  eval 'grep -qx "./dev test" "$ROOT/.ci/run" && grep -qF "./dev test" "$ROOT/README.md"'
layout links
check "every link of README.md and docs/*.md leads to a file and heading that exist${problems:+: $problems}" test -z "$problems"
layout unlinked
check "README.md links every page of docs/${problems:+: $problems}" test -z "$problems"
# 12 words: a sentence copied, not a phrase that recurs ("the lock is busy or the wait ran out").
layout twice 12
problems=$(head -20 <<<"$problems")
check "no passage of 12 words is written in two of README.md, docs/*.md and the man page${problems:+: $problems}" \
  test -z "$problems"
layout env
check "every variable rlock reads or sets has an entry in the man page's ENVIRONMENT${problems:+: $problems}" \
  test -z "$problems"
layout md-refs
check "every .md file a test names exists${problems:+: $problems}" test -z "$problems"
# The exit statuses --help lists ("Exit status: 0 ok, 1 not held, 64 usage, ..."),
# each an entry of the man page's EXIT STATUS (".B 64", ".B 2, 3").
exit_help=$("$RLOCK" --help | sed -n '/^Exit status:/,/^$/p' | tr '\n' ' ')
exit_codes=$(grep -oE '(^|[ ,])[0-9]{1,3} [a-zA-Z(]' <<<"$exit_help" | grep -oE '[0-9]+' | sort -un)
check "rlock --help lists exit statuses (got: $(tr '\n' ' ' <<<"$exit_codes"))" test -n "$exit_codes"
exit_section=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN")
for code in $exit_codes; do
  check "exit status $code (rlock --help) has an entry in the man page's EXIT STATUS" \
    grep -qE "^\.B ([0-9]+, )*$code(,|$)" <<<"$exit_section"
done
finish
