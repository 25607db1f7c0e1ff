#!/usr/bin/env bash
# Redlock: a re-entering `run` (RLOCK_OWNER) gives back only the level it took.
# (a) The outer `acquire` holds R on masters 0 and 2 (master 1 was frozen).
#     A re-entering `run` meets master 0 frozen: it holds R with master 1 (fresh)
#     and 2 (count 2); its request to master 0 was given up, and master 0,
#     thawed while CMD runs, refuses it (LATE, issue 34) but gets the run's
#     release in time. Before, that release took the outer hold's only level
#     on master 0: the outer acquire, its lease and validity still running,
#     was left on master 2 alone, and another owner's `acquire -n` got R
#     (masters 0 and 1). Now: the outer hold stays on 0 and 2, `status` finds
#     it held, another owner is busy (75). (Found next to the explorer's seed
#     1795739000 schedule 18.)
# (b) The same, the run's request to master 0 applied there but its answer
#     lost (the proxy holds master 0's replies past the per-master timeout):
#     its latch says it was applied, and the run's release takes that level
#     back (master 0 keeps one level, the outer hold's, not two).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
redlock_setup 3
count_on() { mcli "$1" HGET "$2" "$3" 2>/dev/null; }
counts() { echo "$(count_on 0 "$1" "$2")/$(count_on 1 "$1" "$2")/$(count_on 2 "$1" "$2")"; }

# ------------------------------------------------------------------ (a) LATE re-entry
for k in 1 2 3; do
  R=RA$k
  freeze_master 1
  r "${TO[@]}" acquire --ttl 30s "$R"
  thaw_master 1
  expect_rc 0 "[$k] the outer acquire holds $R with masters 0 and 2 (1 frozen)"
  TOK=$OUT
  check "[$k] master 1 came back" wait_until 5 master_up 1
  sleep 0.6 # master 1 refuses the outer's queued request (LATE): nothing of it there
  check "[$k] the outer hold is on masters 0 and 2 only ($(counts "$R" "$TOK"))" \
    test "$(counts "$R" "$TOK")" = "1//1"
  freeze_master 0
  # CMD thaws master 0 well after the run gave its request there up, then
  # stays a moment so that master 0 has read (and refused) it before the release
  RLOCK_OWNER=$TOK r "${TO[@]}" run --ttl 3s "$R" -- sh -c "sleep 1; kill -CONT ${MASTER_PID[0]}; sleep 0.3"
  thaw_master 0
  expect_rc 0 "[$k] the re-entering run ran"
  check "[$k] master 0 answers" wait_until 5 master_up 0
  check "[$k] the outer hold keeps its level on masters 0 and 2; the run's fresh one on 1 is gone ($(counts "$R" "$TOK"))" \
    test "$(counts "$R" "$TOK")" = "1//1"
  r status "$R"
  expect_rc 0 "[$k] status: $R is held (a majority)"
  r "${TO[@]}" acquire -n --ttl 5s "$R"
  expect_rc 75 "[$k] another owner finds $R busy"
  r "${TO[@]}" release "$R" --owner "$TOK"
  expect_rc 0 "[$k] the outer hold is released"
  check "[$k] $R is gone from every master" test "$(nodes_with_key "$R")" = ""
done

# ------------------------------------------------------------------ (b) answer lost
proxy_master 0
export RLOCK_URL="$(proxy_url 0),$(master_url 1),$(master_url 2)" # master 0 through the proxy
for k in 1 2; do
  R=RB$k
  r "${TO[@]}" acquire --ttl 30s "$R"
  expect_rc 0 "[b$k] the outer acquire holds $R"
  TOK=$OUT
  check "[b$k] on all three masters ($(counts "$R" "$TOK"))" test "$(counts "$R" "$TOK")" = "1/1/1"
  proxy_set 0 delay-down 900 # master 0 applies, its answer comes after the run gave it up
  RLOCK_OWNER=$TOK r "${TO[@]}" run --ttl 3s "$R" -- sleep 0.1
  expect_rc 0 "[b$k] the re-entering run ran"
  proxy_set 0 pass
    sleep 1 # the delayed release (sent to master 0 before the proxy let it pass) is served
  check "[b$k] one level left everywhere: the run's level on master 0 went by its latch ($(counts "$R" "$TOK"))" \
    test "$(counts "$R" "$TOK")" = "1/1/1"
  r "${TO[@]}" release "$R" --owner "$TOK"
  expect_rc 0 "[b$k] the outer hold is released"
  check "[b$k] $R is gone from every master" wait_until 3 eval '[ "$(nodes_with_key "$R")" = "" ]'
done
finish
