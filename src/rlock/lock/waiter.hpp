#pragma once

#include <rlock/core/signals.hpp>
#include <rlock/lock/lock.hpp>

#include <functional>
#include <optional>

namespace rlock::lock {

struct AcquireRequest {
  LockKeys keys;
  std::string owner;
  Millis lease{30'000};
  HolderInfo info;
  std::optional<Millis> wait; // nullopt: one attempt only (-n)
};

// Called while waiting, after each busy attempt, with the holder and the time
// left until the wait's deadline (for the terminal display).
using BusyCallback = std::function<void(const Holder& holder, Millis wait_left)>;

// Takes the lock, waiting up to request.wait without polling: after a busy
// attempt it subscribes to the release channel on a second connection and tries
// again on each release message, or when the holder's lease runs out, whichever
// comes first. All attempts share one op id, so a late-applied attempt is never
// counted twice. Returns the last attempt's result (acquired or busy at the
// deadline). Throws Interrupted when a signal arrives on `signals` while
// waiting, and RedisError when Redis cannot be reached.
AcquireResult acquire(redis::Connection& conn, const AcquireRequest& request,
                      SignalFd* signals, const BusyCallback& on_busy);

} // namespace rlock::lock
