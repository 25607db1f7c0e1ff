#pragma once

#include <rlock/core/duration.hpp>
#include <rlock/core/errors.hpp>

// Every default a user can see, written once: the parser, the help text (formatted
// from these), the lock code and the run code all read them here.

namespace rlock {

// The lease of acquire and run without --ttl, and of renew when the lock's
// record says none (Redisson's default lease). lua/lib/record.lua cannot
// include this header: its recorded_lease() repeats the number, and the unit
// test "defaults: the Lua lease default is k_default_lease" keeps them equal.
inline constexpr Millis k_default_lease{30'000};

// --connect-timeout and --io-timeout.
inline constexpr Millis k_default_connect_timeout{2'000};
inline constexpr Millis k_default_io_timeout{2'000};

// status --watch without DUR.
inline constexpr Millis k_default_watch{2'000};

// run --kill-after: SIGKILL this long after SIGTERM when stopping CMD.
inline constexpr Millis k_default_kill_after{10'000};

// -E/--conflict-exit-code: the exit code of busy unless remapped (EX_TEMPFAIL, as flock).
inline constexpr int k_default_conflict_exit_code = static_cast<int>(ExitCode::busy);

} // namespace rlock
