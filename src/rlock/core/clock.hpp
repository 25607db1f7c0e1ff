#pragma once

// The monotonic clock every deadline is on (the wall clock is only shown).

#include <rlock/core/duration.hpp>

#include <chrono>

namespace rlock {

// Every deadline in rlock is on the monotonic clock; the wall clock is only shown.
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Milliseconds from now until `deadline`, at least 0, for poll(2).
inline int poll_timeout_ms(TimePoint deadline) {
  auto left = std::chrono::ceil<Millis>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : left > 86'400'000 ? 86'400'000 : static_cast<int>(left);
}

} // namespace rlock
