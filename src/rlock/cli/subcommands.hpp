#pragma once

// The subcommand table's row (ninja's kTools is the model): each subcommand's
// file (cli/cmd_*.cpp) defines its row; cli/subcommands.cpp lists the rows in
// one table, which parsing, help, dispatch, error messages and the docs checks read.

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace rlock::cli {

struct Context;     // what a handler works with (cli/context.hpp)
struct Invocation;  // what parsing made of argv (cli/options.hpp)
struct SharedFlags; // the raw values of the flags several subcommands share (cli/flags.hpp)

// The environment as parse() reads it (a variable's value, or nullptr when unset).
using Env = const char* (*)(const char*);

// Converts what CLI11 filled into a subcommand's own flags into its typed
// options (Invocation::own), after the common fields are set; throws
// UsageError. Called once, after a successful parse.
using Convert = std::function<void(Invocation& inv, Env env)>;

// One subcommand. Adding one means a file cli/cmd_NAME.cpp defining its row
// (flags, conversion, handler, exit status), the row's line in the table
// (cli/subcommands.cpp), and its docs (man page, completions: test_docs).
struct Subcommand {
  std::string_view name;
  std::string_view summary;
  // Declares its flags on `sub` (its CLI11 subcommand): the shared ones
  // (cli/flags.hpp) into `shared`, its own into values the returned Convert
  // owns. Never null.
  Convert (*flags)(CLI::App& sub, SharedFlags& shared) = nullptr;
  int (*handler)(Context&) = nullptr; // runs the parsed invocation; returns the exit status
  // How an error ends it, when not the common way (one line "rlock: CONTEXT:
  // WHY" on stderr, cli::exit_code): says it and returns the exit status.
  // check, a monitoring plugin: UNKNOWN (3) on stdout.
  int (*on_error)(const std::string& context, const std::string& why) = nullptr;
  bool needs_owner = false;   // release, renew: refuse to guess whose lock
  bool takes_command = false; // run: everything after "--" is CMD [ARG...]
  // Its NAMEs are locks it takes or changes: at most 64, each once, no comma,
  // their keys made before the handler runs. False: names only shown
  // (status, check: a name given twice counts once), or none taken.
  bool takes_lock_names = false;
  // It takes or renews locks (acquire, run, renew): the default replica sync
  // applies, so the handshake also counts each primary's replicas.
  bool writes_leases = false;
  // Its exit statuses for its --help footer, each code named as ExitCode
  // names it ({ok}, {not_held}, {usage}, {unavailable}, {software}, {busy},
  // {lost}, {denied}, {cannot_execute}, {not_found}: cli/flags exit_footer),
  // so each subcommand's help says what its own 1 means (issue 43).
  std::string_view exits;
};

// Every subcommand, in the order help lists them (the one table).
std::span<const Subcommand* const> subcommands();

// The row named `name`, or nullptr.
const Subcommand* find_subcommand(std::string_view name);

// Every subcommand's name, comma-separated in table order, for error messages.
std::string subcommand_names();

} // namespace rlock::cli
