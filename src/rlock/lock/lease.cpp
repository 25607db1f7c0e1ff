// Where a lease starts and whether enough of it is left (lock/lease.hpp).

#include <rlock/lock/lease.hpp>

#include <algorithm>

namespace rlock::lock {

TimePoint lease_start(const Sends& sends, bool replayed, Millis answered, Millis asked) {
  const TimePoint applied = replayed ? sends.earlier_unanswered.value_or(sends.called) : sends.answered;
  return std::max(sends.called, applied) - std::max(Millis(0), asked - answered);
}

Millis lease_margin(Millis lease) {
  return std::clamp(lease / 10, Millis(1), Millis(2000));
}

bool lease_left_enough(TimePoint start, Millis lease, TimePoint now) {
  return now < start + lease - lease_margin(lease);
}

bool lease_is_stale(TimePoint lease_start, TimePoint now, Millis lease) {
  return now - lease_start > lease / 10;
}

} // namespace rlock::lock
