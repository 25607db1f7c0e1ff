#pragma once

// `rlock history`'s own options, as its file (cli/cmd_history.cpp) converts
// them: Invocation::own_as<HistoryOptions>().

namespace rlock::cli {

struct HistoryOptions {
  int limit = 20;   // --limit N: the newest N events
  bool utc = false; // --utc: times in UTC (default: local time)
};

} // namespace rlock::cli
