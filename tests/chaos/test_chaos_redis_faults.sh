#!/usr/bin/env bash
# Chaos 4 - Redis goes away under running holders: restarted empty, DEBUG SLEEP
# and SIGSTOP of redis-server longer than the lease, a silent partition (a proxy
# that stops forwarding with its sockets open), and replies delayed past the
# lease. Each fault hits 4 holders at once, twice (40 holder cases). For every
# one: the command is stopped before the server-side lease could expire (its
# death, seen through a pidfd, is compared with the lease end rebuilt from
# MONITOR), rlock exits 76 within a bound (its own request timeouts fire; it
# never hangs on a dead socket), and it sends its owner-checked release (one
# sent to a server asleep or stopped is given up on, and never runs late). After Redis restarted empty, the loss is seen
# at the next renewal.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/chaos_lib.sh"
start_redis
proxy_start
RELEASE_SHA=$(sha1sum "$RLOCK_LUA/release.lua" | awk '{ print $1 }')
HOLDERS=4 ROUNDS=2 FAULT_MS=3000 IO=300ms

# judge TAG FAULT T_FAULT [bound_ms]: records the verdicts of one round.
judge() {
  local tag=$1 fault=$2 t_fault=$3 bound=${4:-} i
  for i in $(seq 0 $((HOLDERS - 1))); do
    local f=${H_FILES[$i]} name=${H_NAMES[$i]} case="$fault $tag$((i + 1))"
    if [ -z "${H_WITNESSES[$i]}" ]; then record started 0 "$case"; continue; fi
    record started 1 "$case"
    wait_until 10 has_file "$f.death"
    local death; death=$(cat "$f.death" 2>/dev/null || echo -1)
    if [ -n "$bound" ]; then
      local after=$(( death - t_fault ))
      record "seen_$fault" "$([ "$death" -gt 0 ] && [ "$after" -le "$bound" ] && echo 1 || echo 0)" "$case: ${after}ms"
      record "after_$fault" 1 "$after"
    else
      local end; end=$(python3 "$TOOL" lease "$MON_FILE" "$name" | head -n1 | awk '{ print $3 }')
      local margin=$(( ${end:-0} - death ))
      record "before_lease_$fault" "$([ "$death" -gt 0 ] && [ "${end:-0}" -gt 0 ] && [ "$margin" -gt 0 ] && echo 1 || echo 0)" \
        "$case: death ${margin}ms before the lease end"
      record "margin_$fault" 1 "$margin"
    fi
    local exited=$(( $(bg_t "$f") - t_fault ))
    record "exit76_$fault" "$([ "$(bg_rc "$f")" = 76 ] && echo 1 || echo 0)" "$case: rc $(bg_rc "$f")"
    record "no_hang_$fault" "$([ "$exited" -le $((FAULT_MS + 3000 + SLACK_MS)) ] && echo 1 || echo 0)" "$case: exited ${exited}ms after the fault"
    if [ "$fault" = sleep ] || [ "$fault" = stop ]; then
      # The release went to a server that was asleep or stopped: rlock gave up
      # on it and says so, and it never takes effect later (issue 34: the
      # connection is reset, and its deadline has passed when the server wakes);
      # the lease, already over on the server's clock, frees the lock.
      local rel; rel=$(grep -c "\"EVALSHA\" \"$RELEASE_SHA\" \"[0-9]*\" \"$name\"" "$MON_FILE")
      local gave_up=0
      grep -q "could not release" "$f.err" && gave_up=1
      record "release_$fault" "$([ "$rel" -ge 1 ] || [ $gave_up = 1 ] && echo 1 || echo 0)" \
        "$case: $rel releases seen, gave up on it: $gave_up"
    elif [ "$fault" != restart ]; then
      local rel; rel=$(grep -c "\"EVALSHA\" \"$RELEASE_SHA\" \"[0-9]*\" \"$name\"" "$MON_FILE")
      record "release_$fault" "$([ "$rel" -ge 1 ] && echo 1 || echo 0)" "$case: $rel releases seen"
    fi
    wait_until 5 key_gone "$name"
  done
}

for round in $(seq 1 $ROUNDS); do
  # DEBUG SLEEP: the server stops answering anyone, then catches up.
  monitor_start "$TEST_TMP/mon.sleep$round"
  start_holders s$round $HOLDERS -u "$RLOCK_URL" --io-timeout $IO --connect-timeout $IO
  t=$(ms); rcli DEBUG SLEEP $((FAULT_MS / 1000)) >/dev/null &
  sleeper=$!
  wait_until 15 holders_done; wait "$sleeper"; sleep 0.3; monitor_stop
  judge s$round sleep "$t"

  # SIGSTOP of redis-server.
  monitor_start "$TEST_TMP/mon.stop$round"
  start_holders t$round $HOLDERS -u "$RLOCK_URL" --io-timeout $IO --connect-timeout $IO
  t=$(ms); kill -STOP "$REDIS_PID"; sleep_ms $FAULT_MS; kill -CONT "$REDIS_PID"
  wait_until 15 holders_done; sleep 0.3; monitor_stop
  judge t$round stop "$t"

  # A silent partition: the proxy forwards nothing, sockets stay open.
  monitor_start "$TEST_TMP/mon.silent$round"
  start_holders p$round $HOLDERS -u "$PROXY_URL" --io-timeout $IO --connect-timeout $IO
  t=$(ms); proxy_mode silent; sleep_ms $FAULT_MS; proxy_mode pass
  wait_until 15 holders_done; sleep 0.3; monitor_stop
  judge p$round silent "$t"

  # Replies delayed past the lease (requests still arrive and are applied).
  monitor_start "$TEST_TMP/mon.delay$round"
  start_holders d$round $HOLDERS -u "$PROXY_URL" --io-timeout $IO --connect-timeout $IO
  t=$(ms); proxy_mode delay-down 2000; wait_until 15 holders_done; proxy_mode pass
  sleep 0.3; monitor_stop
  judge d$round delay "$t"

  # Restarted empty: the next renewal finds the lock gone.
  start_holders r$round $HOLDERS -u "$RLOCK_URL" --io-timeout $IO --connect-timeout $IO
  t=$(ms); redis_restart_empty 0
  kill "$PROXY_PID" 2>/dev/null; proxy_start # the proxy points at the same port
  wait_until 15 holders_done
  judge r$round restart "$t" "$DETECT_MS"
done

for fault in sleep stop silent delay; do
  verdict "before_lease_$fault" "$fault: every command stopped before the server-side lease could expire ($(summary "margin_$fault" ms) to spare)"
  verdict "release_$fault" "$fault: rlock sent its owner-checked release (the server received it, or, asleep or stopped, rlock gave up on it and said so)"
done
verdict seen_restart "restart: the loss was seen and the command stopped within ${DETECT_MS}ms (DETECT_MS: the next renewal + kill grace + one lease for a loaded machine; $(summary after_restart ms))"
for fault in sleep stop silent delay restart; do
  verdict "exit76_$fault" "$fault: rlock exited 76"
  verdict "no_hang_$fault" "$fault: rlock exited within the fault + 3s + SLACK_MS (no hang on a dead socket)"
done
verdict started "every holder's command started"
hygiene_checks redis-faults
finish
