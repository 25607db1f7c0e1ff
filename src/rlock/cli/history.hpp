#pragma once

#include <rlock/lock/history.hpp>

#include <string>

namespace rlock::cli {

// How `rlock history` shows a lock's history.
struct HistoryView {
  bool json = false;  // one document {"schema": 1, ...}
  bool utc = false;   // times in UTC (default: local time)
  int masters = 1;    // > 1: a Redlock, the majority's view
};

// The text (one line per event, oldest first, every value escaped for the
// terminal; a lock made by Redisson is said to be one) or the JSON document of
// `history` of the lock `name`. Pure but for the local time zone.
std::string render_history(const std::string& name, const lock::History& history, const HistoryView& view);

// One event's server time as text: "2026-11-25 23:59:01.123 +0100" (local) or
// "2026-11-25T23:59:01.123Z" (UTC).
std::string event_time(long long at_ms, bool utc);

} // namespace rlock::cli
