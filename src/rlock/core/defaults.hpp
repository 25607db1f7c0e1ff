#pragma once

// Every default a user can see, written once: the parser, the help text (made
// from these), the lock and run code read them here. (A flag that picks a word,
// as run --on-lost, has its default first in its own list, in its subcommand's file.)

#include <rlock/core/duration.hpp>
#include <rlock/core/errors.hpp>

#include <string_view>

namespace rlock {

// The lease of acquire and run without --ttl, and of renew when the lock's
// record says none (Redisson's default lease). lua/lib/record.lua cannot
// include this header: its recorded_lease() repeats the number, and the unit
// test "defaults: the Lua lease default is k_default_lease" keeps them equal.
inline constexpr Millis k_default_lease{30'000};

// Where the locks live without -u, RLOCK_URL or REDIS_URL.
inline constexpr std::string_view k_default_url = "redis://127.0.0.1:6379";

// --connect-timeout and --io-timeout.
inline constexpr Millis k_default_connect_timeout{2'000};
inline constexpr Millis k_default_io_timeout{2'000};

// status --watch without DUR.
inline constexpr Millis k_default_watch{2'000};

// run --kill-after: SIGKILL this long after SIGTERM when stopping CMD.
inline constexpr Millis k_default_kill_after{10'000};

// --sync-replicas N without /DUR: how long to wait for N replicas. Without
// --sync-replicas, one replica's acknowledgement where the primary has
// replicas, within a tenth of the lease and at most k_max_automatic_sync.
inline constexpr Millis k_default_sync_timeout{1'000};
inline constexpr Millis k_max_automatic_sync{1'000};

// The history (lock/history.hpp): RLOCK_HISTORY_MAXLEN, the stream's length
// (XADD MAXLEN ~), and RLOCK_HISTORY_TTL, its lifetime after its last event.
inline constexpr long long k_default_history_max_len = 1'000;
inline constexpr Millis k_default_history_ttl{30LL * 24 * 3600 * 1000};

// history --limit: the newest events shown.
inline constexpr int k_default_history_limit = 20;

// -E/--conflict-exit-code: the exit code of busy unless remapped (EX_TEMPFAIL, as flock).
inline constexpr int k_default_conflict_exit_code = static_cast<int>(ExitCode::busy);

} // namespace rlock
