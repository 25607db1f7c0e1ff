#pragma once

// `rlock check`'s own options, as its file (cli/cmd_check.cpp) converts them:
// Invocation::own_as<CheckOptions>().

#include <rlock/cli/check_judge.hpp>

#include <string>

namespace rlock::cli {

struct CheckOptions {
  std::string match; // --match PATTERN
  CheckSpec spec;    // what to judge (its thresholds)
};

} // namespace rlock::cli
