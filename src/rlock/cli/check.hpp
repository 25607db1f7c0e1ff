#pragma once

// `rlock check`'s one line (Monitoring Plugins: state, text, perfdata) and its
// UNKNOWN for an error.

#include <rlock/cli/check_judge.hpp>
#include <rlock/lock/lock.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// check's UNKNOWN for an error: prints "RLOCK UNKNOWN - <context>: <why>" on
// stdout (one line, whatever the message holds) and returns 3.
int check_unknown(const std::string& context, const std::string& why);

// The plugin's line for these locks and their verdicts (same order), with
// perfdata, ending in a newline: "RLOCK CRITICAL - "a": held 2h (over 1h) |
// 'a held'=7200s;3600;7200;0; ...". Names are escaped (printable), cut to 200
// bytes, and a '|' outside perfdata is written \x7c, so one line stays one line
// and the perfdata starts at the one '|'. Pure.
std::string check_line(const std::vector<lock::LockState>& states, const std::vector<LockVerdict>& verdicts,
                       const CheckSpec& spec, bool named);

// A perfdata label for lock `name` and what it measures: 'NAME what', quoted,
// with ' doubled and = | written \x3d \x7c. Pure.
std::string perf_label(std::string_view name, std::string_view what);

} // namespace rlock::cli
