# The README's lock-only ACL user (sourced by the ACL tests after lib.sh, with
# SRC the source tree and PW the password to give): ACL_LINE, the README's own
# `ACL SETUSER rlock ...` line, and readme_setuser to create users from it.
ACL_LINE=$(grep -m1 '^ACL SETUSER rlock ' "$SRC/README.md")
# readme_setuser USER [SED [EXTRA RULE...]]: the README's line for USER, changed
# by the sed expression SED (none: as it is), its password set to $PW, and the
# extra rules after it; prints Redis's answer.
readme_setuser() {
  local user=$1 edit=${2:-} line
  shift; [ $# -gt 0 ] && shift
  line=${ACL_LINE/>CHANGE-ME/>$PW}
  [ -n "$edit" ] && line=$(sed "$edit" <<<"$line")
  local -a words
  set -f
  read -ra words <<<"$line"
  set +f
  words[2]=$user
  rcli "${words[@]}" "$@"
}
