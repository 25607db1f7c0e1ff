#!/usr/bin/env bash
# What rlock records of a command (issue 30): by default the program and ***
# for each argument, in the lock's record, a fair waiter's record, `status`
# (text and --json) and the history alike, for every mode, re-entry, several
# names, braces and a Redlock, so that `mysqldump -pSECRET`, `--api-key=...`,
# `token=...` or `Authorization: Bearer ...` never reach Redis unasked;
# --record-args or RLOCK_RECORD_ARGS=1 records the arguments (URL passwords and
# -a/--password values still masked); a bad RLOCK_RECORD_ARGS is a warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
start_redis
SECRETS=(-pS3CRET1 --api-key=K3Y2 token=T0K3N3 'Authorization: Bearer B34R3R4')
leaks() { grep -E 'S3CRET1|K3Y2|T0K3N3|B34R3R4' <<<"$1"; }
no_leak() { [ -z "$(leaks "$1")" ]; }
# everything rlock keeps of NAME: its keys' values, the history, status text and JSON
everything() {
  local n=$1 key
  for key in "$n" "rlock_permits:{$n}" "rlock_waiters:{$n}" "rlock_log:{$n}"; do
    case $(rcli TYPE "$key") in
      hash) rcli HGETALL "$key" ;;
      stream) rcli XRANGE "$key" - + ;;
    esac
  done
  "$RLOCK" status "$n" 2>&1
  "$RLOCK" --json status "$n" 2>&1
  "$RLOCK" history "$n" 2>&1
}

# --- run, every mode: CMD's arguments are not recorded
for mode in "" --fair -s --write --limit=2; do
  n=ra${mode//[-=]/}
  r run $mode "$n" -- sh -c 'rlock_seen=$("$0" status "$1" 2>&1; "$0" --json status "$1" 2>&1); echo "$rlock_seen" >"$2"' \
    "$RLOCK" "$n" "$TEST_TMP/$n.seen" "${SECRETS[@]}"
  expect_rc 0 "run ${mode:-(plain)} with secrets among CMD's arguments"
  seen=$(cat "$TEST_TMP/$n.seen"; everything "$n")
  check "run ${mode:-(plain)}: no argument in the record, status or history (leaked: $(leaks "$seen" | head -1))" no_leak "$seen"
  check "run ${mode:-(plain)}: the program and one *** per argument" \
    grep -qF 'sh *** *** *** *** *** *** *** ***' <<<"$seen"
done

# --- a fair waiter's record
r acquire --fair fw --owner holder --ttl 30s
bg "$TEST_TMP/fw" run --fair -w 20s fw -- sh -c true "${SECRETS[@]}"
queued() { [ "$(rcli HLEN 'rlock_waiters:{fw}')" = 1 ]; }
check "a fair waiter queues" wait_until 5 queued
seen=$(everything fw)
check "the waiter's record and status show no argument" no_leak "$seen"
check "... the program and its ***" grep -qF 'sh *** *** *** *** ***' <<<"$seen"
r release fw --owner holder
check "the waiter ran" wait_until 10 bg_done "$TEST_TMP/fw"

# --- acquire records the process that ran it: its arguments too are masked
bash -c '"$1" acquire aq --owner tok-a >/dev/null' bash "$RLOCK" "${SECRETS[@]}"
bash -c '"$1" release aq --owner tok-a >/dev/null' bash "$RLOCK" "${SECRETS[@]}"
seen=$(everything aq)
check "acquire and release: the caller's arguments are not recorded" no_leak "$seen"
check "... its program is (bash ***...)" grep -qF 'bash *** ***' <<<"$seen"

# --- re-entry (RLOCK_OWNER), several names, braces, -E
r acquire re --owner tok-r
RLOCK_OWNER=tok-r r run re '{re}:x' -E 9 -- sh -c true "${SECRETS[@]}"
expect_rc 0 "a run re-entering re (RLOCK_OWNER) and taking {re}:x"
seen=$(everything re; everything '{re}:x')
check "re-entry and braces: no argument recorded" no_leak "$seen"
r release re --owner tok-r

# --- asked for: --record-args, RLOCK_RECORD_ARGS=1 (the known masks still apply)
r --record-args run wa -- sh -c 'sleep 0.3' sh "${SECRETS[@]}" -a redispw redis://u:urlpw@h
expect_rc 0 "--record-args run"
seen=$(everything wa)
check "--record-args: the arguments are in the history (token= still masked)" grep -qF -- '-pS3CRET1 --api-key=K3Y2 token=*** Authorization: Bearer B34R3R4' <<<"$seen"
check "... with -a's value and a URL password still masked" \
  eval 'grep -qF -- "-a *** redis://u:***@h" <<<"$seen" && ! grep -qE "redispw|urlpw" <<<"$seen"'
for mode in "" --fair -s --write --limit=2; do
  n=rr${mode//[-=]/}
  r run $mode "$n" --record-args -- sh -c 'sleep 0.2' sh -pS3CRET1
  expect_rc 0 "run ${mode:-(plain)} --record-args"
  check "run ${mode:-(plain)} --record-args: the arguments are recorded" grep -qF -- 'sh -c sleep 0.2 sh -pS3CRET1' <<<"$(everything "$n")"
done
RLOCK_RECORD_ARGS=1 r acquire wb --owner tok-b --write
seen=$(everything wb)
check "RLOCK_RECORD_ARGS=1 acquire --write: the caller's arguments are recorded" grep -qF 'test_record_args.sh' <<<"$seen"
RLOCK_RECORD_ARGS=yes r release wb --owner tok-b --write
expect_rc 0 "a bad RLOCK_RECORD_ARGS does not stop a release"
check "... it is a warning" grep -qF 'rlock: warning: RLOCK_RECORD_ARGS: "yes" is neither 1 nor 0' <<<"$ERR"

# --- a Redlock: each master's record and history
start_masters 3
RL=(-u "$(master_url 0)" -u "$(master_url 1)" -u "$(master_url 2)")
r "${RL[@]}" run rl -- sh -c true "${SECRETS[@]}"
expect_rc 0 "Redlock run"
seen=""
for i in 0 1 2; do seen+=$(redis-cli -p "${MASTER_PORTS[$i]}" XRANGE 'rlock_log:{rl}' - +); done
seen+=$("$RLOCK" "${RL[@]}" history rl)
check "Redlock: no argument in any master's history" no_leak "$seen"
check "... the program and its ***" grep -qF 'sh *** ***' <<<"$seen"

finish
