#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rlock::cli {

struct Context; // what a handler works with (cli/commands.cpp)

// One subcommand: the one table (ninja's kTools is the model) that parsing,
// help, dispatch, error messages and the docs checks all read, so they cannot
// drift. Adding a subcommand means adding a row here and its options in
// options.cpp.
struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*handler)(Context&); // runs the parsed invocation; returns the exit status
  bool needs_owner;         // release, renew: refuse to guess whose lock
  bool takes_command;       // run: everything after "--" is CMD [ARG...]
};

// Every subcommand, in the order help lists them.
std::span<const Subcommand> subcommands();

// The row named `name`, or nullptr.
const Subcommand* find_subcommand(std::string_view name);

// "acquire, release, renew, status, force-unlock, run", for error messages.
std::string subcommand_names();

} // namespace rlock::cli
