#pragma once

#include <rlock/cli/check_judge.hpp>
#include <rlock/cli/subcommands.hpp>
#include <rlock/lock/lock.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// `rlock check`: reads the locks (named, or those --match lists, as status
// does), judges each (check_judge), prints one line and returns the state
// (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
int cmd_check(Context& ctx);

// True for check's row of the subcommand table (null: false).
bool is_check(const Subcommand* sub);

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
