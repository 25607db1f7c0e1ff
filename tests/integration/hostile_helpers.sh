# Sourced after lib.sh by the hostile-server scenarios (test_conn_hostile.sh,
# test_conn_tls.sh): a fake server (hostile_server.py) and rlock run against it.
# HOSTILE_URL_SCHEME (redis or rediss) and HOSTILE_RLOCK_ARGS (e.g. the TLS CA)
# say how rlock reaches it; the server speaks TLS when HOSTILE_TLS_CERT is set.
[ -x /usr/bin/time ] || { echo "FAIL: /usr/bin/time is needed to measure peak memory"; exit 1; }
command -v timeout >/dev/null || { echo "FAIL: timeout(1) is needed"; exit 1; }
HOSTILE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hostile_server.py"
# A capped reply stays well under 200 MB (64 MiB of bytes, ~75 MB of values); a
# sanitizer build keeps freed memory in quarantine and needs more.
# Likewise a sanitizer build takes about three times as long to read and refuse
# 64 MiB (TSan over TLS on a loaded machine: 10 s where 4 s is the plain bound).
RSS_LIMIT_KB=204800
TIME_SCALE=1
grep -qaE "__asan_init|__tsan_init" "$RLOCK" && RSS_LIMIT_KB=716800 && TIME_SCALE=3
# So does an emulated one (RLOCK_EMULATOR: qemu-user, ./dev test --arch arm64):
# 2.4 s for the 64 MiB over TLS on an idle machine, 0.3 s natively.
[ -n "${RLOCK_EMULATOR:-}" ] && TIME_SCALE=3
HOSTILE_URL_SCHEME=${HOSTILE_URL_SCHEME:-redis}
[ -n "${HOSTILE_RLOCK_ARGS+set}" ] || HOSTILE_RLOCK_ARGS=()

# hr MODE ARGS...: starts a fake server in MODE (it exits by itself after 15 s, or
# with this script), runs rlock ARGS against it like r, then stops the server.
# Also sets D (elapsed ms) and RSS (rlock's peak resident memory, KB). rlock is
# killed after 60 s whatever happens.
hr() {
  local mode=$1 f="$TEST_TMP/hostile.port" t0 hpid
  shift
  rm -f "$f"
  python3 "$HOSTILE" "$mode" "$f" 15 &
  hpid=$!
  _pids+=("$hpid")
  wait_until 5 has_file "$f" || { echo "FAIL: hostile server ($mode) did not start"; exit 1; }
  t0=$(ms)
  timeout -s KILL 60 /usr/bin/time -o "$TEST_TMP/rss" -f %M \
    "$RLOCK" -u "$HOSTILE_URL_SCHEME://127.0.0.1:$(cat "$f")" "${HOSTILE_RLOCK_ARGS[@]}" "$@" \
    >"$TEST_TMP/out" 2>"$TEST_TMP/err"
  RC=$?
  D=$(($(ms) - t0))
  kill -9 "$hpid" 2>/dev/null
  wait "$hpid" 2>/dev/null
  RSS=$(tail -1 "$TEST_TMP/rss" 2>/dev/null)
  [[ $RSS =~ ^[0-9]+$ ]] || RSS=999999999
  OUT=$(cat "$TEST_TMP/out")
  ERR=$(cat "$TEST_TMP/err")
}

# clean RC MAX_MS WHAT: the last hr exited RC with one error line, within MAX_MS
# (x TIME_SCALE for a sanitizer build, + SLACK_MS for a loaded machine: MAX_MS is
# what the timeouts allow), with bounded memory.
clean() {
  echo "  $3: rc $RC after ${D}ms, peak RSS ${RSS} KB: ${ERR:0:200}"
  expect_rc "$1" "$3"
  check "$3: one error line 'rlock: ...'" one_err_line
  check "$3: done within ${2}ms x $TIME_SCALE + SLACK_MS (${D}ms)" test "$D" -lt $(( $2 * TIME_SCALE + SLACK_MS ))
  check "$3: peak memory under $((RSS_LIMIT_KB / 1024)) MB (${RSS} KB)" test "$RSS" -lt "$RSS_LIMIT_KB"
}
