# fish completion for rlock(1). Install: copy to /usr/share/fish/vendor_completions.d/rlock.fish
# (or ~/.config/fish/completions/rlock.fish).

# Global options that take a value (the next word is that value, not the subcommand).
set -g __rlock_global_values -u --url --password-file --connect-timeout --io-timeout --sync-replicas \
    --tls-ca-file --tls-cert --tls-key --tls-server-name -E --conflict-exit-code
# Subcommand options that take a value.
set -g __rlock_sub_values --ttl -w --wait --owner --limit --match --on-lost --kill-after --hold-min \
    --max-hold --once-per --if-unavailable

# The words before the cursor after the subcommand, with the subcommand first;
# nothing (status 1) when no subcommand is typed yet.
function __rlock_after_subcommand
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case $__rlock_global_values
                set -e tokens[1]
            case '-*'
            case '*'
                printf '%s\n' $tokens
                return 0
        end
        set -e tokens[1]
    end
    return 1
end

function __rlock_no_subcommand
    not __rlock_after_subcommand >/dev/null
end

# True when the subcommand is one of the arguments.
function __rlock_using
    set -l words (__rlock_after_subcommand)
    or return 1
    contains -- $words[1] $argv
end

# run: where CMD starts among the words after the subcommand (given as the
# arguments), past the "--" that follows NAME (`run -- -x -- CMD` names "-x");
# status 1 when the words do not reach CMD.
function __rlock_command_start
    test "$argv[1]" = run; or return 1
    set -l named 0
    set -l i 2
    while test $i -le (count $argv)
        switch $argv[$i]
            case --
                if test $named -eq 1
                    math $i + 1
                    return 0
                end
                set named 1 # the next word is NAME
                set i (math $i + 1)
            case $__rlock_sub_values
                set i (math $i + 1)
            case '-*'
            case '*'
                set named 1
        end
        set i (math $i + 1)
    end
    return 1
end

# run: true once the cursor is in CMD.
function __rlock_in_command
    set -l words (__rlock_after_subcommand)
    or return 1
    __rlock_command_start $words >/dev/null
end

# A NAME position: a subcommand that takes lock names, and (run) not yet in CMD.
function __rlock_wants_name
    __rlock_using acquire release renew status force-unlock run history check
    and not __rlock_in_command
    and not string match -q -- '-*' (commandline -ct)
end

# The names of the locks on the server, asked of `rlock status --names` with
# short timeouts, quietly; nothing when no server answers. The URL: -u/--url
# given on the line (with --password-file and --tls-*), else RLOCK_URL /
# REDIS_URL as rlock reads them.
function __rlock_lock_names
    set -l tokens (commandline -opc)
    set -l args
    set -l i 2
    while test $i -lt (count $tokens)
        switch $tokens[$i]
            case -u --url --password-file --tls-ca-file --tls-cert --tls-key --tls-server-name
                set -a args $tokens[$i] $tokens[(math $i + 1)]
                set i (math $i + 1)
            case '-u?*' '--url=*' '--password-file=*' '--tls-*'
                set -a args $tokens[$i]
        end
        set i (math $i + 1)
    end
    command rlock $args --connect-timeout 300ms --io-timeout 500ms -q status --names 2>/dev/null
end

# CMD and its arguments, completed as a command line of their own.
function __rlock_complete_command
    set -l words (__rlock_after_subcommand) (commandline -ct)
    set -l start (__rlock_command_start $words)
    or return
    set -l line (string escape -- $words[$start..-1])
    complete -C (string join ' ' -- $line)
end

set -l durations 500ms 2s 10s 30s 1m 5m 30m 1h

complete -c rlock -f

# Subcommands.
complete -c rlock -n __rlock_no_subcommand -a acquire -d 'Take a lock (or re-enter it) and print the owner token'
complete -c rlock -n __rlock_no_subcommand -a release -d 'Release one level of a lock (or all with --all)'
complete -c rlock -n __rlock_no_subcommand -a renew -d 'Extend the lease of a lock you hold'
complete -c rlock -n __rlock_no_subcommand -a status -d 'Show who holds locks, since when and for how long'
complete -c rlock -n __rlock_no_subcommand -a force-unlock -d 'Remove a lock whoever holds it'
complete -c rlock -n __rlock_no_subcommand -a run -d 'Hold a lock while a command runs'
complete -c rlock -n __rlock_no_subcommand -a history -d "Show a lock's past: who held it, for how long, how it ended"
complete -c rlock -n __rlock_no_subcommand -a doctor -d 'Check what threatens lock safety on the server(s)'
complete -c rlock -n __rlock_no_subcommand -a check -d 'Monitoring plugin: OK/WARNING/CRITICAL/UNKNOWN for stuck locks'

# Global options (before the subcommand).
complete -c rlock -n __rlock_no_subcommand -s u -l url -x -d 'Redis URL (several: one Redlock)' \
    -a 'redis:// rediss:// redis-cluster:// rediss-cluster:// redis-sentinel:// rediss-sentinel:// unix://'
complete -c rlock -n __rlock_no_subcommand -l password-file -r -F -d 'Read the password from FILE'
complete -c rlock -n __rlock_no_subcommand -l connect-timeout -x -a "$durations" -d 'Connect timeout (default 2s)'
complete -c rlock -n __rlock_no_subcommand -l io-timeout -x -a "$durations" -d 'Timeout of each request (default 2s)'
complete -c rlock -n __rlock_no_subcommand -l sync-replicas -x -a '0 1 1/500ms 1/1s 2 2/1s' \
    -d 'Wait until N replicas have each acquisition and renewal, at most DUR (0: off)'
complete -c rlock -n __rlock_no_subcommand -l tls-ca-file -r -F -d 'TLS: trust the CAs of this PEM file'
complete -c rlock -n __rlock_no_subcommand -l tls-cert -r -F -d 'TLS: client certificate (PEM), with --tls-key'
complete -c rlock -n __rlock_no_subcommand -l tls-key -r -F -d 'TLS: the client certificate\'s private key (PEM)'
complete -c rlock -n __rlock_no_subcommand -l tls-server-name -x -a '(__fish_print_hostnames)' \
    -d 'TLS: the name the server\'s certificate must carry (and SNI)'
complete -c rlock -n __rlock_no_subcommand -l tls-insecure -d 'TLS: do not verify the server\'s certificate (warns)'
complete -c rlock -n __rlock_no_subcommand -l json -d 'Machine-readable output: one JSON document on stdout'
complete -c rlock -n __rlock_no_subcommand -l record-args \
    -d 'Record the command\'s arguments (default: the program only, each argument as ***)'
complete -c rlock -n __rlock_no_subcommand -s q -l quiet -d 'No warnings or progress on stderr'
complete -c rlock -n __rlock_no_subcommand -s v -l verbose -d 'Log each Redis request and reply to stderr'
complete -c rlock -n __rlock_no_subcommand -s E -l conflict-exit-code -x \
    -d 'Exit code when the lock is busy or the wait ran out (default 75)'
complete -c rlock -n __rlock_no_subcommand -l version -d 'Print the version and the git revision it was built from'
complete -c rlock -n 'not __rlock_in_command' -s h -l help -d 'Print help and exit'

# --json after a subcommand (not run: its output is CMD's).
complete -c rlock -n '__rlock_using acquire release renew status force-unlock history doctor' -l json \
    -d 'Machine-readable output: one JSON document on stdout'

# Lease, waiting, owner.
complete -c rlock -n '__rlock_using acquire run' -l ttl -x -a "$durations" \
    -d 'Lease: the lock expires unless renewed (default 30s)'
complete -c rlock -n '__rlock_using renew' -l ttl -x -a "$durations" -d 'New lease (default: the lease it was taken with)'
complete -c rlock -n '__rlock_using acquire run' -s w -l wait -x -a "0 $durations" -d 'Wait up to DUR for the lock'
complete -c rlock -n '__rlock_using acquire run' -s n -l no-wait -d 'Do not wait: fail at once if the lock is busy'
complete -c rlock -n '__rlock_using acquire' -l owner -x -d 'Owner token (default: a new random token)'
complete -c rlock -n '__rlock_using release renew' -l owner -x -d 'Owner token printed by acquire'
complete -c rlock -n '__rlock_using release' -l all -d 'Release every reentry level, not just one'

# MODE: one of --fair, -s/--shared, --write, --limit N.
complete -c rlock -n '__rlock_using acquire release renew run' -l fair \
    -d 'Fair lock: waiters get it in arrival order (RFairLock)'
complete -c rlock -n '__rlock_using acquire release renew run' -s s -l shared \
    -d 'Shared (read) lock: many holders, no writer'
complete -c rlock -n '__rlock_using acquire release renew run' -l write -d 'Write lock: one holder, no readers'
complete -c rlock -n '__rlock_using acquire release renew run' -l limit -x -a '1 2 3 4 5 10' \
    -d 'At most N holders at once, each with its own lease'

# status, force-unlock.
complete -c rlock -n '__rlock_using status' -l match -x -d 'Glob pattern of lock names to list (SCAN MATCH)'
complete -c rlock -n '__rlock_using status' -l watch -d 'Show it again every DUR (optional) until interrupted'
complete -c rlock -n '__rlock_using status; and __fish_prev_arg_in --watch' -a "$durations" -d duration
complete -c rlock -n '__rlock_using status' -l format -x -a 'text json openmetrics' \
    -d 'Output: text, json or openmetrics (Prometheus text format)'
complete -c rlock -n '__rlock_using status' -l output -r -F -d 'Write the json or openmetrics output to FILE atomically'

# check (a monitoring plugin).
complete -c rlock -n '__rlock_using check' -l match -x -d 'Check every lock matching this glob'
complete -c rlock -n '__rlock_using check' -l held-longer -x -a '30m,1h 1h,2h 2h,6h' \
    -d 'WARNING/CRITICAL when held longer than WARN,CRIT'
complete -c rlock -n '__rlock_using check' -l dead-holder -d 'CRITICAL when force-unlock --if-dead would remove it'
complete -c rlock -n '__rlock_using check' -l waiters -x -a '1,5 5,10' -d 'WARNING/CRITICAL above WARN,CRIT waiters'
complete -c rlock -n '__rlock_using check' -l ttl-none -d 'CRITICAL when held without an expiry'
complete -c rlock -n '__rlock_using check' -l done-within -x -a '1h 26h 8d' \
    -d 'CRITICAL when a once-per job last completed longer ago than DUR'
complete -c rlock -n '__rlock_using force-unlock' -l if-dead \
    -d 'Remove it only when its recorded holder process on this host is gone'

# history.
complete -c rlock -n '__rlock_using history' -l limit -x -a '5 20 100 1000' -d 'Show the newest N events (default 20)'
complete -c rlock -n '__rlock_using history' -l utc -d 'Times in UTC (default: local time)'

# run.
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l on-lost -x \
    -a 'term\t"SIGTERM, then SIGKILL (default)" kill\t"SIGKILL at once" ignore\t"let CMD go on"' \
    -d 'When the lock is lost'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l kill-after -x -a "$durations" \
    -d 'SIGKILL this long after SIGTERM when stopping CMD (default 10s)'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l hold-min -x -a "$durations" \
    -d 'Keep the lock until DUR after acquisition even if CMD ends sooner'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l max-hold -x -a "$durations" \
    -d 'Stop CMD as for a lost lock after holding DUR'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l wait-descendants \
    -d 'When CMD exits, keep the lock until what it left running ends'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l once-per -x -a '1h 1d 7d' \
    -d 'Run CMD at most once per DUR window (on the server clock)'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -l if-unavailable -x \
    -a 'fail\t"exit 69 (default)" skip\t"run nothing, exit 0" run\t"run CMD without the lock"' \
    -d 'When Redis cannot be reached'
complete -c rlock -n '__rlock_using run; and not __rlock_in_command' -a -- -d 'then CMD [ARG...]'

# NAME: the locks on the server; CMD after run's "--".
complete -c rlock -n __rlock_wants_name -a '(__rlock_lock_names)' -d 'lock name'
complete -c rlock -n __rlock_in_command -x -a '(__rlock_complete_command)'
