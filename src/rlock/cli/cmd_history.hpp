#pragma once

// `rlock history`'s own options, as its file (cli/cmd_history.cpp) converts
// them: Invocation::own_as<HistoryOptions>().

#include <rlock/core/defaults.hpp>

namespace rlock::cli {

struct HistoryOptions {
  int limit = k_default_history_limit; // --limit N: the newest N events
  bool utc = false; // --utc: times in UTC (default: local time)
};

} // namespace rlock::cli
