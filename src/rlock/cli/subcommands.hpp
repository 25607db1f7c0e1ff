#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rlock::cli {

struct Context; // what a handler works with (cli/commands.cpp)

// One subcommand: the one table (ninja's kTools is the model) that parsing,
// help, dispatch, error messages and the docs checks all read, so they cannot
// drift. Adding a subcommand means adding a row to k_subcommands
// (commands.cpp, beside its handler), its options in options.cpp, and its docs.
struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*handler)(Context&) = nullptr; // runs the parsed invocation; returns the exit status
  bool needs_owner = false;           // release, renew: refuse to guess whose lock
  bool takes_command = false;         // run: everything after "--" is CMD [ARG...]
  // Its NAMEs are locks it takes or changes: at most 64, each once, no comma,
  // their keys made before the handler runs. False: names only shown
  // (status), or none taken.
  bool takes_lock_names = false;
  // It takes or renews locks (acquire, run, renew): the default replica sync
  // applies, so the handshake also counts each primary's replicas.
  bool writes_leases = false;
};

// Every subcommand, in the order help lists them.
std::span<const Subcommand> subcommands();

// The row named `name`, or nullptr.
const Subcommand* find_subcommand(std::string_view name);

// Every subcommand's name, comma-separated in table order, for error messages.
std::string subcommand_names();

} // namespace rlock::cli
