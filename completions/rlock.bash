# bash completion for rlock(1). Install: copy to /usr/share/bash-completion/completions/rlock
# (or source it from ~/.bashrc).

_rlock() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion -n = || return
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local subcommands="acquire release renew status force-unlock run doctor"
  local global="-u --url --password-file --connect-timeout --io-timeout --sync-replicas --tls-ca-file
    --tls-cert --tls-key --tls-server-name --tls-insecure --json -q --quiet -v --verbose
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
    --password-file | --tls-ca-file | --tls-cert | --tls-key)
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
    --on-lost)
      COMPREPLY=($(compgen -W "term kill ignore" -- "$cur"))
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
      COMPREPLY=($(compgen -W "redis:// rediss:// redis-sentinel:// rediss-sentinel:// unix://" -- "$cur"))
      return
      ;;
    --ttl | -w | --wait | --kill-after | --hold-min | --max-hold | --connect-timeout | \
      --io-timeout | --watch)
      COMPREPLY=($(compgen -W "500ms 2s 10s 30s 1m 5m 30m 1h" -- "$cur"))
      return
      ;;
    --sync-replicas)
      COMPREPLY=($(compgen -W "1 1/500ms 1/1s 2 2/1s" -- "$cur"))
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
    status) opts="--match --watch --json -h --help" ;;
    force-unlock) opts="--if-dead --json -h --help" ;;
    doctor) opts="--json -h --help" ;;
    run) opts="--ttl -w --wait -n --no-wait $modes --on-lost --kill-after --hold-min --max-hold --wait-descendants --once-per --if-unavailable -h --help --" ;;
    *) return ;;
  esac
  if [ -z "$sub" ] || [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  fi
}
complete -F _rlock rlock
