#pragma once

// `rlock run`'s own options, as its file (cli/cmd_run.cpp) converts them:
// Invocation::own_as<RunOptions>() (CMD itself: Invocation::child_argv).

#include <rlock/core/defaults.hpp>
#include <rlock/run/policy.hpp>

#include <optional>
#include <string_view>
#include <utility>

namespace rlock::cli {

// run --if-unavailable (run/policy.hpp).
using IfUnavailable = run::IfUnavailable;

// The words --on-lost and --if-unavailable take and what each means; the
// first of each is its default (the help says it from here).
inline constexpr std::pair<std::string_view, run::OnLost> k_on_lost_words[] = {
    {"term", run::OnLost::term}, {"kill", run::OnLost::kill}, {"ignore", run::OnLost::ignore}};
inline constexpr std::pair<std::string_view, IfUnavailable> k_if_unavailable_words[] = {
    {"fail", IfUnavailable::fail}, {"skip", IfUnavailable::skip}, {"run", IfUnavailable::run}};

struct RunOptions {
  run::OnLost on_lost = k_on_lost_words[0].second; // --on-lost
  Millis kill_after = k_default_kill_after;           // --kill-after
  std::optional<Millis> hold_min;                     // --hold-min
  std::optional<Millis> max_hold;                     // --max-hold
  bool wait_descendants = false;                      // --wait-descendants
  std::optional<Millis> once_per;                     // --once-per: the window length
  IfUnavailable if_unavailable = k_if_unavailable_words[0].second; // --if-unavailable
};

} // namespace rlock::cli
