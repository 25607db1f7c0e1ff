#pragma once

// `rlock status`'s own options, as its file (cli/cmd_status.cpp) converts
// them: Invocation::own_as<StatusOptions>().

#include <rlock/core/duration.hpp>

#include <optional>
#include <string>

namespace rlock::cli {

// status --format (--json is json).
enum class StatusFormat { text, json, openmetrics };

struct StatusOptions {
  std::string match;                        // --match PATTERN
  std::optional<Millis> watch;              // --watch: redraw interval
  bool list_names = false;                  // --names (hidden: for the completions)
  StatusFormat format = StatusFormat::text; // --format (json also with --json)
  std::optional<std::string> output;        // --output FILE (written atomically)
};

} // namespace rlock::cli
