#!/usr/bin/env bash
# CTest entry (CMakeLists.txt globs bench/test_*.sh): the benchmark's smoke mode, one
# short iteration of every measurement against rlock only. Installs nothing; fails if
# redis-server or the rlock binary is missing, if any measurement fails, if the
# contended counter or the no-overlap check is wrong, or if rlock's deterministic
# targets (2 requests per cycle, silent waiters, renewals ∝ holders) are missed.
# The reaction times (section 7) are measured once and printed, not judged.
set -u
cd "$(dirname "$0")"
export RLOCK_BIN=${RLOCK_BIN:-$(cd .. && pwd)/build/rlock}
exec python3 ./run --smoke
