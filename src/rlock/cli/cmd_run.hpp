#pragma once

// `rlock run`'s own options, as its file (cli/cmd_run.cpp) converts them:
// Invocation::own_as<RunOptions>() (CMD itself: Invocation::child_argv).

#include <rlock/core/defaults.hpp>
#include <rlock/run/policy.hpp>

#include <optional>

namespace rlock::cli {

// run --if-unavailable (run/policy.hpp).
using IfUnavailable = run::IfUnavailable;

struct RunOptions {
  run::OnLost on_lost = run::OnLost::term;            // --on-lost
  Millis kill_after = k_default_kill_after;           // --kill-after
  std::optional<Millis> hold_min;                     // --hold-min
  std::optional<Millis> max_hold;                     // --max-hold
  bool wait_descendants = false;                      // --wait-descendants
  std::optional<Millis> once_per;                     // --once-per: the window length
  IfUnavailable if_unavailable = IfUnavailable::fail; // --if-unavailable
};

} // namespace rlock::cli
