#pragma once

// `rlock history`'s output: the text or JSON of a lock's history.

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
// terminal; a lock made by Redisson is said to be one; when the history key
// cannot be written, that and the ACL or the fix, never "never changed by
// rlock") or the JSON document of `history` of the lock `name` ("log": the key,
// its type, whether it can be written). `acl`: the rule that would let this
// user keep it (lock::history_acl). Pure but for the local time zone.
std::string render_history(const std::string& name, const lock::History& history, const HistoryView& view,
                           const std::string& log_key = "", const std::string& acl = "");

// Why `history` could not read the history key `log_key` (LogAccess::no_read),
// with the ACL rule `acl` that would allow it: the error's message.
std::string history_unreadable(const std::string& log_key, const std::string& acl);

// One event's server time as text: "2026-11-25 23:59:01.123 +0100" (local) or
// "2026-11-25T23:59:01.123Z" (UTC).
std::string event_time(long long at_ms, bool utc);

} // namespace rlock::cli
