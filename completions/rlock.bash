# bash completion for rlock(1). Install: copy to /usr/share/bash-completion/completions/rlock
# (or source it from ~/.bashrc).

# The names of the locks on the server, those starting with $cur, into COMPREPLY:
# asked of `rlock status --names` with short timeouts, quietly; nothing when no
# server answers. The URL: -u/--url given before the subcommand (as typed; with
# --password-file and --tls-*), else RLOCK_URL / REDIS_URL as rlock reads them. Names are read line by line, never
# through compgen -W, which would expand a name's $(...) as shell code.
_rlock_lock_names() {
  local args=() i name
  COMPREPLY=()
  for ((i = 1; i < sub_at; i++)); do
    case ${words[i]} in
      -u | --url | --password-file | --tls-ca-file | --tls-cert | --tls-key | --tls-server-name)
        args+=("${words[i]}" "${words[i + 1]}")
        ;;
      -u?* | --url=* | --password-file=* | --tls-*) args+=("${words[i]}") ;;
    esac
  done
  while IFS= read -r name; do
    [[ $name == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
  done < <(rlock "${args[@]}" --connect-timeout 300ms --io-timeout 500ms -q status --names 2>/dev/null)
}

# Bash replaces only what follows the last ':' of the word being completed (':'
# is in COMP_WORDBREAKS): trim the replies to match, as bash-completion's
# __ltrim_colon_completions does.
_rlock_colon_trim() {
  if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
    local prefix=${cur%"${cur##*:}"} i
    for i in "${!COMPREPLY[@]}"; do
      COMPREPLY[i]=${COMPREPLY[i]#"$prefix"}
    done
  fi
}

_rlock() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    # "=" and ":" do not split words: a URL (redis://host:6379) or a lock name
    # (job:nightly) stays one word.
    _init_completion -n =: || return
  elif [ -n "${COMP_LINE:-}" ]; then
    # Without bash-completion: COMP_WORDS is split at ':' too, the line is not
    # (split at blanks here; quotes are not parsed).
    local line=${COMP_LINE:0:COMP_POINT}
    read -ra words <<<"$line"
    [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=${words[cword - 1]}
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local subcommands="acquire release renew status force-unlock run history doctor check"
  local global="-u --url --password-file --connect-timeout --io-timeout --sync-replicas --tls-ca-file
    --tls-cert --tls-key --tls-server-name --tls-insecure --json --record-args -q --quiet -v --verbose
    -E --conflict-exit-code --version -h --help"

  # The subcommand, and whether `--` of `run` comes before the cursor.
  local i sub="" sub_at=0
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      -u | --url | --password-file | --connect-timeout | --io-timeout | --sync-replicas | \
        --tls-ca-file | --tls-cert | --tls-key | --tls-server-name | -E | --conflict-exit-code)
        [ -z "$sub" ] && ((i++))
        ;;
      --)
        if [ "$sub" = run ]; then
          # Complete CMD and its arguments like any command line.
          if declare -F _command_offset >/dev/null; then
            _command_offset $((i + 1))
          else
            COMPREPLY=($(compgen -c -- "$cur"))
          fi
          return
        fi
        ;;
      -*) ;;
      *)
        if [ -z "$sub" ]; then
          sub=${words[i]}
          sub_at=$i
        fi
        ;;
    esac
  done

  case $prev in
    --password-file | --tls-ca-file | --tls-cert | --tls-key | --output)
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
    --on-lost)
      COMPREPLY=($(compgen -W "term kill ignore" -- "$cur"))
      return
      ;;
    --format)
      COMPREPLY=($(compgen -W "text json openmetrics" -- "$cur"))
      return
      ;;
    --held-longer)
      COMPREPLY=($(compgen -W "30m,1h 1h,2h 2h,6h" -- "$cur"))
      return
      ;;
    --waiters)
      COMPREPLY=($(compgen -W "1,5 5,10 10,50" -- "$cur"))
      return
      ;;
    --done-within)
      COMPREPLY=($(compgen -W "1h 2h 26h 8d" -- "$cur"))
      return
      ;;
    --if-unavailable)
      COMPREPLY=($(compgen -W "fail skip run" -- "$cur"))
      return
      ;;
    --once-per)
      COMPREPLY=($(compgen -W "1h 6h 12h 1d 7d" -- "$cur"))
      return
      ;;
    -u | --url)
      COMPREPLY=($(compgen -W "redis:// rediss:// redis-cluster:// rediss-cluster:// redis-sentinel:// rediss-sentinel:// unix://" -- "$cur"))
      _rlock_colon_trim
      return
      ;;
    --ttl | -w | --wait | --kill-after | --hold-min | --max-hold | --once-per | --watch | \
      --connect-timeout | --io-timeout)
      COMPREPLY=($(compgen -W "500ms 2s 10s 30s 1m 5m 30m 1h" -- "$cur"))
      return
      ;;
    --sync-replicas)
      COMPREPLY=($(compgen -W "0 1 1/500ms 1/1s 2 2/1s" -- "$cur"))
      return
      ;;
    --if-unavailable)
      COMPREPLY=($(compgen -W "fail skip run" -- "$cur"))
      return
      ;;
    --limit)
      COMPREPLY=($(compgen -W "1 2 3 4 5 10" -- "$cur"))
      return
      ;;
    --owner | --match | --tls-server-name | -E | --conflict-exit-code)
      return
      ;;
  esac

  local opts modes="--fair -s --shared --write --limit"
  case $sub in
    "") opts="$global $subcommands" ;;
    acquire) opts="--ttl -w --wait -n --no-wait --owner $modes --json -h --help" ;;
    release) opts="--owner --all $modes --json -h --help" ;;
    renew) opts="--owner --ttl $modes --json -h --help" ;;
    status) opts="--match --watch --format --output --json -h --help" ;;
    check) opts="--match --held-longer --dead-holder --waiters --ttl-none --done-within -h --help" ;;
    force-unlock) opts="--if-dead --json -h --help" ;;
    history) opts="--limit --utc --json -h --help" ;;
    doctor) opts="--json -h --help" ;;
    run) opts="--ttl -w --wait -n --no-wait $modes --on-lost --kill-after --hold-min --max-hold --wait-descendants
      --once-per --if-unavailable -h --help --" ;;
    *) return ;;
  esac
  if [ -z "$sub" ] || [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ "$sub" != doctor ]; then
    _rlock_lock_names # NAME (run: before its --, which returned above)
    _rlock_colon_trim
  fi
}
complete -F _rlock rlock
