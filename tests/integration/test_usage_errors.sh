#!/usr/bin/env bash
# Usage errors exit 64 with one line 'rlock: ...' on stderr; valid duration forms work.
. "$(dirname "$0")/lib.sh"
start_redis

# usage DESCRIPTION [--has TEXT]... -- ARGS...: expects 64, one stderr line, nothing on stdout
usage() {
  local what=$1; shift
  local needles=()
  while [ "$1" = --has ]; do needles+=("$2"); shift 2; done
  [ "$1" = -- ] && shift
  r "$@"
  expect_rc 64 "usage error: $what"
  check "$what: one stderr line starting 'rlock: '" one_err_line
  check "$what: nothing on stdout" test -z "$OUT"
  local n
  for n in "${needles[@]}"; do
    check "$what: message names '$n'" grep -qF -- "$n" <<<"$ERR"
  done
}

usage "unknown flag" --has --bogus -- acquire X --bogus
usage "unknown global flag" --has --frob -- --frob acquire X
usage "unknown subcommand" -- frobnicate X
usage "no subcommand" --
usage "missing NAME (acquire)" --has NAME -- acquire
usage "missing NAME (release)" -- release --owner o
usage "missing NAME (renew)" -- renew --owner o
usage "missing NAME (force-unlock)" -- force-unlock
usage "missing NAME (run)" -- run -- true
usage "a NAME twice for acquire" --has '"X" is named twice' -- acquire X Y X
usage "two modes" -- acquire X --fair --write
usage "--limit 0" --has --limit -- acquire X --limit 0
usage "--limit x" --has --limit -- acquire X --limit x
usage "a mode on a Redlock" --has Redlock -- -u redis://127.0.0.1:1 -u redis://127.0.0.1:2 acquire X -s
usage "a comma in one of several names" --has comma -- acquire X a,b
usage "--ttl 0" --has --ttl --has "'0'" -- acquire X --ttl 0
usage "--ttl -1" --has --ttl --has "-1" -- acquire X --ttl -1
usage "--ttl abc" --has --ttl --has abc -- acquire X --ttl abc
usage "--ttl 400d" --has --ttl --has 400d -- acquire X --ttl 400d
usage "--ttl 366d" --has 366d -- acquire X --ttl 366d
usage "--ttl empty" --has --ttl -- acquire EMPTY1 --ttl ''
usage "-w empty" -- acquire EMPTY2 -w ''
usage "--io-timeout empty" --has --io-timeout -- --io-timeout '' acquire X
usage "--ttl 1.2.3" --has 1.2.3 -- acquire X --ttl 1.2.3
usage "--ttl 5 hours" --has 5hours -- acquire X --ttl 5hours
usage "-w 1x" --has 1x -- acquire X -w 1x
usage "--wait -5s" --has -5s -- acquire X --wait=-5s
usage "-w with -n" -- acquire X -w 1s -n
usage "-n with -w (other order)" -- acquire X -n -w 1s
usage "renew --ttl bad" --has --ttl -- renew X --owner o --ttl 0s
usage "--connect-timeout 0" --has --connect-timeout -- --connect-timeout 0 acquire X
usage "--io-timeout abc" --has --io-timeout --has abc -- --io-timeout abc acquire X
usage "-E abc" -- -E abc acquire X
usage "bad URL scheme http" --has http://x -- -u http://x acquire X
usage "bad URL port 99999" --has 99999 -- -u redis://h:99999 acquire X
usage "bad URL port 0" -- -u redis://h:0 acquire X
usage "bad URL port abc" -- -u redis://h:abc acquire X
usage "bad URL db" -- -u redis://127.0.0.1:6379/abc acquire X
usage "relative unix path" -- -u unix://relative.sock acquire X
usage "bad rediss:// port" --has "bad port" -- -u rediss://127.0.0.1:x acquire X
usage "rediss-sentinel:// without a master name" --has "missing master name" -- -u rediss-sentinel://h:26379 acquire X
usage "redis-sentinel:// without a master name" --has "missing master name" -- -u redis-sentinel://h:26379 acquire X
usage "a bad URL among several" --has "bad port" -- -u "$RLOCK_URL" -u "redis://127.0.0.1:x" acquire X
usage "the same master twice (a fake Redlock majority)" --has "are the same server" -- -u "$RLOCK_URL" -u "$RLOCK_URL/0" acquire X
RLOCK_URL=http://x usage "bad RLOCK_URL" --has http://x -- acquire X
usage "release without owner" --has owner -- release X
usage "renew without owner" --has owner -- renew X
usage "run L without -- CMD" -- run L
usage "run L -- (empty command)" -- run L --
usage "--on-lost bad value" --has bogus -- run L --on-lost bogus -- true
usage "--kill-after 0" -- run L --kill-after 0 -- true
usage "--max-hold abc" -- run L --max-hold abc -- true
usage "--hold-min -1s" -- run L --hold-min=-1s -- true
usage "--tls-ca-file with a redis:// URL" --has "--tls-ca-file: no URL uses TLS" -- --tls-ca-file /dev/null acquire X
usage "--tls-insecure with a redis:// URL" --has "--tls-insecure: no URL uses TLS" -- --tls-insecure acquire X
usage "--tls-ca-file missing" --has "--tls-ca-file: /nonexistent/ca.pem" -- -u rediss://127.0.0.1:6380 \
  --tls-ca-file /nonexistent/ca.pem acquire X
usage "--tls-cert without --tls-key" --has "--tls-key" -- -u rediss://127.0.0.1:6380 --tls-cert /dev/null acquire X
usage "status --bogus" -- status --bogus
usage "--password-file missing" --has /nonexistent/pw -- --password-file /nonexistent/pw acquire X
# Each mode refused with --once-per says its own reason (issue 19: --write, an
# exclusive mode, was told "a shared mode lets several hosts run it").
usage "--once-per --write" --has "--write is exclusive, but" -- run --once-per 1h --write J -- true
check "--once-per --write: no word of a shared mode" bash -c '! grep -q "shared" <<<"$1"' _ "$ERR"
usage "--once-per -s" --has "a shared lock lets several hosts run it at once" -- run --once-per 1h -s J -- true
usage "--once-per --limit 2" --has "--limit N lets N holders run it" -- run --once-per 1h --limit 2 J -- true
check "no usage error touched Redis (besides the empty-value cases, checked above)" \
  test -z "$(rcli --scan | grep -v -e '^EMPTY' -e '^redisson_lock_token:{EMPTY')"
check "no lock X was created" test "$(rcli EXISTS X)" = 0
check "--ttl '' created no lock" test "$(rcli EXISTS EMPTY1)" = 0

# --- help and version are not errors
r --help
expect_rc 0 "--help"
check "--help prints usage on stdout" grep -qi usage <<<"$OUT"
r --version
expect_rc 0 "--version"
check "--version prints a version" grep -q '[0-9]\.[0-9]' <<<"$OUT"
r acquire --help
expect_rc 0 "acquire --help"

# --- valid duration forms
ttl_is() { # NAME DUR LO HI
  r acquire "$1" --ttl "$2"
  expect_rc 0 "--ttl $2 accepted"
  local p; p=$(rcli PTTL "$1"); echo "  --ttl $2 -> PTTL $p"
  check "--ttl $2: PTTL between $3 and $4" between "$p" "$3" "$4"
}
ttl_is d1 500ms 1 500
ttl_is d2 1.5 1000 1500
ttl_is d3 0.5 1 500
ttl_is d4 1m30s 89000 90000
ttl_is d5 1h30m 5399000 5400000
ttl_is d6 1d 86399000 86400000
ttl_is d7 30s 29000 30000
ttl_is d8 5m 299000 300000
ttl_is d9 2h 7199000 7200000
ttl_is d10 365d 31535999000 31536000000
for w in 500ms 1.5 1m30s 1h30m 1d 0.5; do
  r acquire "free-$w" -w "$w"
  expect_rc 0 "-w $w accepted (free lock)"
done
r --connect-timeout 1.5 --io-timeout 1m30s acquire t1
expect_rc 0 "--connect-timeout 1.5 --io-timeout 1m30s accepted"
r acquire t2 --ttl=2s --owner=o2
expect_rc 0 "--ttl=2s --owner=o2 (= form)"
check "--owner=o2 used" test "$(rcli HGET t2 o2)" = 1
r renew t2 --owner o2 --ttl 1h30m
expect_rc 0 "renew --ttl 1h30m"
p=$(rcli PTTL t2); check "renew --ttl 1h30m: PTTL $p" between "$p" 5399000 5400000

finish
