#pragma once

#include <rlock/core/duration.hpp>
#include <rlock/core/log.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// The subcommands, in the order help lists them. Help, the completion and man
// page checks all read this table.
struct SubcommandInfo {
  std::string_view name;
  std::string_view summary;
};
inline constexpr SubcommandInfo k_subcommands[] = {
    {"acquire", "Take a lock (or re-enter it) and print the owner token"},
    {"release", "Release one level of a lock (or all with --all)"},
    {"renew", "Extend the lease of a lock you hold"},
    {"status", "Show who holds locks, since when and for how long"},
    {"force-unlock", "Remove a lock whoever holds it (clears a dead holder)"},
    {"run", "Hold a lock while a command runs: acquire, renew, release"},
};

enum class Command { acquire, release, renew, status, force_unlock, run };
enum class OnLost { term, kill, ignore };

struct GlobalOptions {
  std::vector<std::string> urls; // as given (flags or environment), never empty
  std::optional<std::string> password_file;
  Millis connect_timeout{2000};
  Millis io_timeout{2000};
  bool json = false;
  log::Level level = log::Level::normal;
  int conflict_exit_code = 75;
};

// Every subcommand's options in one struct; each subcommand reads its own.
struct Invocation {
  GlobalOptions global;
  Command command = Command::status;
  std::vector<std::string> names;      // NAME (one, except for status)
  std::string owner;                   // --owner / RLOCK_OWNER; "" = none given
  Millis ttl{30'000};                  // --ttl (acquire, run)
  std::optional<Millis> renew_ttl;     // --ttl (renew): nullopt = the lock's own lease
  std::optional<Millis> wait;          // -w; nullopt = -n (do not wait)
  bool all = false;                    // release --all
  std::string match;                   // status --match
  OnLost on_lost = OnLost::term;       // run
  Millis kill_after{10'000};           // run
  std::optional<Millis> hold_min;      // run
  std::optional<Millis> max_hold;      // run
  std::vector<std::string> child_argv; // run: CMD ARG...
};

// What parsing decided: run an invocation, or exit at once after printing
// `output` (help, version) to stdout.
struct ParseResult {
  std::optional<Invocation> invocation;
  std::string output;
  int exit_code = 0;
};

// Parses argv without side effects other than reading the environment through
// `env` (RLOCK_URL, REDIS_URL, RLOCK_OWNER). Throws UsageError (exit 64) for
// every bad flag, value, duration, URL or name.
ParseResult parse(int argc, const char* const* argv, const char* (*env)(const char*));

// The full help text of the program or of one subcommand (for docs checks).
std::string help_text(std::string_view subcommand);

// Every long flag name ("--ttl") the parser knows, for the docs checks.
std::vector<std::string> all_long_flags();

} // namespace rlock::cli
