# The guide's lock-only ACL user (sourced by the ACL tests after lib.sh, with
# SRC the source tree and PW the password to give): ACL_LINE, the
# `ACL SETUSER rlock ...` line of docs/security.md, its one home, and
# acl_setuser to create users from it.
ACL_DOC=docs/security.md
ACL_LINE=$(grep -m1 '^ACL SETUSER rlock ' "$SRC/$ACL_DOC")
# acl_setuser USER [SED [EXTRA RULE...]]: the guide's line for USER, changed
# by the sed expression SED (none: as it is), its password set to $PW, and the
# extra rules after it; prints Redis's answer.
acl_setuser() {
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
