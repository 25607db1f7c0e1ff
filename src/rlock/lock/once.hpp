#pragma once

// run --once-per: windows, the record of a done job, and the verdict on it.

#include <rlock/lock/lock.hpp>
#include <rlock/lock/record.hpp>
#include <rlock/redis/client.hpp>

#include <optional>
#include <string>

namespace rlock::lock {

// `run --once-per DUR`: a window is one of the consecutive DUR-long intervals
// since the Unix epoch, on the Redis server's clock (1d = one UTC day).
struct Window {
  long long start_ms = 0; // inclusive
  long long end_ms = 0;   // exclusive: start_ms + length
};

// The window of length `length_ms` (>= 1) that the instant `now_ms` (ms since
// the epoch; before it too) falls in. Pure.
Window window_of(long long now_ms, long long length_ms);

// Whether the job is done in the window `now_ms` falls in, from its record:
enum class OnceVerdict {
  not_done,   // no record, or one of a completion outside this window, or a key
              // that is no record of ours (no expiry, readable or not: rlock
              // always sets one)
  done,       // a completion in this window: do not run
  unreadable, // a key with an expiry whose completion time cannot be read:
              // taken as done (do not run: the safe side for a run-once job);
              // it goes away by its expiry
};

// The verdict on `record` (nullopt: no key) at server time `now_ms` for windows
// of `length_ms`. The completion counts when its done_at_ms falls in the window
// of now_ms, whatever window the record itself names (a record written with
// another DUR still says when the job was done). Pure.
OnceVerdict judge_once(const std::optional<DoneRecord>& record, long long now_ms, long long length_ms);

// What once_done.lua answered.
struct DoneResult {
  OwnerCheck check = OwnerCheck::ok; // ok: recorded
  std::string detail;                // another holder, a key type, a layout
  Window window;                     // when recorded
  long long done_at_ms = 0;          // when recorded
};

// Records that `owner`, holding the plain lock (exclusive or fair layout)
// `keys`, completed the job with `exit_status` in the current window of
// `length`, with `info`'s host, pid and command (one script, resent at most
// once with the same op id: lua/once_done.lua). Writes nothing unless the
// owner holds the lock. Throws RedisError.
DoneResult record_done(redis::Client& client, const LockKeys& keys, const std::string& owner, Millis length,
                       const HolderInfo& info, int exit_status);

} // namespace rlock::lock
