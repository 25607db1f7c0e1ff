#!/bin/bash
# The contended benchmark's critical section: section.sh COUNTER LOG
# Reads the counter, sleeps 5 ms, writes counter+1, and appends "enter_ns exit_ns pid"
# to LOG (wall clock, microsecond resolution from EPOCHREALTIME; LC_ALL=C for the '.').
# bench/run checks the final counter and that no two [enter, exit] intervals overlap.
enter=${EPOCHREALTIME/./}
read -r n <"$1"
sleep 0.005
echo $((n + 1)) >"$1"
leave=${EPOCHREALTIME/./}
echo "${enter}000 ${leave}000 $$" >>"$2"
