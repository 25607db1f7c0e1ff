#!/usr/bin/env bash
# status --format openmetrics: the Prometheus text format, validated by
# promtool (package prometheus; ./dev installs it), with hostile names
# (quotes, backslashes, newlines, invalid UTF-8, 4 KB); --output FILE is
# atomic (a reader never sees a part, no temp file left, the old file kept
# when Redis cannot be reached); --format json is --json; a Redlock (several
# -u) and a Cluster.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
command -v promtool >/dev/null ||
  { echo "FAIL: promtool is not installed (apt-get install prometheus; ./dev build installs it)"; exit 1; }
start_redis
promcheck() { promtool check metrics <"$1" >"$TEST_TMP/promtool.out" 2>&1 || { cat "$TEST_TMP/promtool.out"; return 1; }; }
has() { grep -qxF -- "$1" <<<"$OUT"; }
M=$TEST_TMP/metrics.prom

# --- a held lock, a free named one with a completed once-per job, a fair queue
r acquire deploy --ttl 60s
r run --once-per 1d nightly -- true
r acquire q --fair --ttl 60s
bg "$TEST_TMP/w1" acquire q --fair -w 30s
queued() { [ "$(rcli ZCARD 'redisson_lock_timeout:{q}')" = 1 ]; }
check "a fair waiter queues" wait_until 10 queued
r status deploy nightly q --format openmetrics
expect_rc 1 "status NAME... --format openmetrics: exit 1 as status (nightly is free)"
printf '%s\n' "$OUT" >"$M"
check "promtool check metrics accepts it" promcheck "$M"
for family in rlock_lock_held rlock_lock_held_seconds rlock_lock_ttl_seconds rlock_lock_waiters \
              rlock_lock_renewed_age_seconds rlock_job_last_done_timestamp_seconds rlock_lock_info; do
  check "HELP and TYPE gauge of $family" eval 'grep -q "^# HELP $family " "$M" && has "# TYPE $family gauge"'
done
check "held 1 / 0" eval 'has "rlock_lock_held{name=\"deploy\"} 1" && has "rlock_lock_held{name=\"nightly\"} 0"'
check "ttl of deploy ~60s" grep -qE '^rlock_lock_ttl_seconds\{name="deploy"\} (59|60)\.[0-9]{3}$' "$M"
check "held_seconds of deploy" grep -qE '^rlock_lock_held_seconds\{name="deploy"\} [0-9]+\.[0-9]{3}$' "$M"
check "waiters of q: 1" has 'rlock_lock_waiters{name="q"} 1'
done_at=$(rcli GET 'rlock_done:{nightly}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["done_at_ms"])')
check "last done timestamp = the record's done_at_ms ($done_at)" \
  has "rlock_job_last_done_timestamp_seconds{name=\"nightly\"} $(( done_at / 1000 )).$(printf %03d $(( done_at % 1000 )))"
check "info: kind, mode, host, pid" grep -qE "^rlock_lock_info\{name=\"deploy\",kind=\"rlock\",mode=\"exclusive\",holder_host=\"$(hostname)\",holder_pid=\"[0-9]+\"" "$M"
check "ends with # EOF" test "$(tail -n1 "$M")" = "# EOF"
kill "$(cat "$TEST_TMP/w1.pid")" 2>/dev/null

# --- every lock (no names): exit 0; the free 'nightly' is not listed
r status --format openmetrics
expect_rc 0 "status --format openmetrics (all locks)"
check "lists deploy, not the free nightly" eval 'has "rlock_lock_held{name=\"deploy\"} 1" && ! grep -qF "name=\"nightly\"" <<<"$OUT"'

# --- hostile names
NASTY=$'q"uo\\te\nnl\xff'
BIG=$(printf 'k%.0s' $(seq 1 4096))
r acquire "$NASTY" --ttl 60s
# rlock refuses names over 1024 bytes; another client's lock may have one.
rcli HSET "$BIG" "tok:1" 1 >/dev/null; rcli PEXPIRE "$BIG" 60000 >/dev/null
rcli PERSIST "$NASTY" >/dev/null
r status --format openmetrics
expect_rc 0 "status with hostile names"
printf '%s\n' "$OUT" >"$M"
check "promtool accepts hostile names" promcheck "$M"
check "quote and newline escaped; a backslash doubled, then escaped; a byte that is not UTF-8 as \\xff; no expiry is +Inf" \
  has 'rlock_lock_ttl_seconds{name="q\"uo\\\\te\nnl\\xff"} +Inf'
check "the 4 KB name whole" grep -qF "rlock_lock_held{name=\"$BIG\"} 1" "$M"
r status "$NASTY" --format openmetrics
check "a named hostile lock too (promtool)" eval 'printf "%s\n" "$OUT" >"$M" && promcheck "$M"'

# --- distinct names, distinct series (issue 30): node_exporter reads a file
# with a series twice as an error; invalid UTF-8 used to become U+FFFD for all
for n in $'x\xff' $'x\xfe' $'x\xef\xbf\xbd' 'x\xff'; do
  rcli HSET "$n" "8743c9c0-0795-4907-87fd-6c719a6b4586:1" 1 >/dev/null
  rcli PEXPIRE "$n" 60000 >/dev/null
done
r status --format openmetrics $'x\xff' $'x\xfe' $'x\xef\xbf\xbd' 'x\xff' $'x\xff'
expect_rc 0 "four lookalike names (one given twice)"
held=$(grep '^rlock_lock_held{' <<<"$OUT")
check "four series of rlock_lock_held, no two alike (got: $(tr '\n' ' ' <<<"$held"))" \
  test "$(wc -l <<<"$held")" = 4 -a "$(sort -u <<<"$held" | wc -l)" = 4
check "U+FFFD is itself" has "rlock_lock_held{name=\"x"$'\xef\xbf\xbd'"\"} 1"
check "the byte 0xff is the text \\xff" has 'rlock_lock_held{name="x\\xff"} 1'
check "the name x\\xff (a backslash) has its backslash doubled" has 'rlock_lock_held{name="x\\\\xff"} 1'
check "no series twice in any family" test -z "$(grep -v '^#' <<<"$OUT" | sed 's/ [^ ]*$//' | sort | uniq -d)"
printf '%s\n' "$OUT" >"$M"
check "promtool accepts them" promcheck "$M"
r status --format openmetrics rd rd
check "a free name given twice: one series" test "$(grep -c '^rlock_lock_held{name="rd"}' <<<"$OUT")" = 1
for n in $'x\xff' $'x\xfe' $'x\xef\xbf\xbd' 'x\xff'; do rcli DEL "$n" >/dev/null; done

# --- --output FILE: atomic
D=$TEST_TMP/textfile
mkdir -p "$D"
r status --format openmetrics --output "$D/rlock.prom"
expect_rc 0 "--output FILE"
check "nothing on stdout" test -z "$OUT"
check "the file passes promtool" promcheck "$D/rlock.prom"
check "only the file in its directory (no temp left)" test "$(ls -A "$D")" = rlock.prom
check "readable by the collector (0644 under umask 022)" test "$(umask 022; stat -c %a "$D/rlock.prom")" = 644
# A reader never sees a part: 25 writes while a reader reads (bounded).
(
  for _ in $(seq 1 25); do "$RLOCK" status --format openmetrics --output "$D/rlock.prom" || echo "write failed"; done
  echo done >"$TEST_TMP/writer.done"
) >"$TEST_TMP/writer.log" 2>&1 &
_pids+=($!)
reads=0 partial=0
for _ in $(seq 1 2000); do
  [ -e "$TEST_TMP/writer.done" ] && break
  [ "$(tail -n1 "$D/rlock.prom")" = "# EOF" ] || partial=$((partial + 1))
  reads=$((reads + 1))
done
check "writer finished" wait_until 60 test -e "$TEST_TMP/writer.done"
check "no write failed" test ! -s "$TEST_TMP/writer.log"
check "$reads reads during 25 writes: none saw a partial file ($partial)" test "$partial" = 0
check "still no temp file left" test "$(ls -A "$D")" = rlock.prom
before=$(md5sum <"$D/rlock.prom")
r -u "redis://127.0.0.1:$(free_port)" status --format openmetrics --output "$D/rlock.prom"
expect_rc 69 "Redis unreachable: 69"
check "the old file is kept" test "$(md5sum <"$D/rlock.prom")" = "$before"
# A directory that cannot hold the temp file, even for root: a path under a file.
r status --format openmetrics --output "$D/rlock.prom/x.prom"
expect_rc 64 "a directory that is a file: the user's path, 64 (not 70)"
check "names the file" grep -qF -- "--output \"$D/rlock.prom/x.prom\"" <<<"$ERR"
check "says why" grep -qF "\"$D/rlock.prom\" is not a directory" <<<"$ERR"
check "the file in the way is untouched" test "$(md5sum <"$D/rlock.prom")" = "$before"
r status --format openmetrics --output "$D/missing/x.prom"
expect_rc 64 "into a directory that does not exist: 64"
check "... says so" grep -qF "the directory \"$D/missing\" does not exist" <<<"$ERR"
r status --format openmetrics --output "$D"
expect_rc 64 "onto a directory: 64"
check "... says so" grep -qF "is a directory; give the name of the file to write" <<<"$ERR"
check "... one error line each" one_err_line
r status --json --output "$D/s.json"
expect_rc 0 "--json --output"
check "the file is status --json" is_json "$(cat "$D/s.json")"

# --- formats and usage
r status deploy --format json
expect_rc 0 "--format json"
check "--format json is the --json document" test "$(jget "$OUT" schema)" = 1
r status deploy --format text
check "--format text is the table" grep -q deploy <<<"$OUT"
r --json status --format openmetrics
expect_rc 64 "--json with --format openmetrics"
r status --format text --output "$D/x"
expect_rc 64 "--output of the text table"
r status --format openmetrics --watch 1s
expect_rc 64 "--format openmetrics with --watch"
r status --format yaml
expect_rc 64 "--format yaml"

# --- Redlock: several -u
start_masters 3
RL=(-u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)")
r "${RL[@]}" acquire rl --ttl 60s
r "${RL[@]}" status --format openmetrics
expect_rc 0 "Redlock status --format openmetrics"
check "Redlock: promtool, rl held" eval 'printf "%s\n" "$OUT" >"$M" && promcheck "$M" && has "rlock_lock_held{name=\"rl\"} 1"'

# --- Cluster
start_cluster
r -u "$CLUSTER_URL" acquire c1 --ttl 60s
r -u "$CLUSTER_URL" acquire c2 --ttl 60s
r -u "$CLUSTER_URL" status --format openmetrics
expect_rc 0 "Cluster status --format openmetrics"
check "Cluster: promtool, c1 and c2 held" \
  eval 'printf "%s\n" "$OUT" >"$M" && promcheck "$M" && has "rlock_lock_held{name=\"c1\"} 1" && has "rlock_lock_held{name=\"c2\"} 1"'
finish
