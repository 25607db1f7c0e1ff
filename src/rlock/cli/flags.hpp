#pragma once

// What a subcommand's file declares its flags with: the global options, the
// flags several subcommands share (NAME..., MODE, --owner, --ttl, -w/-n) and
// the checks and conversions more than one subcommand needs.

#include <rlock/cli/options.hpp>
#include <rlock/cli/subcommands.hpp>
#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// The global options' values as CLI11 fills them (cli/options.cpp declares
// and converts them into GlobalOptions).
struct GlobalFlags {
  std::vector<std::string> urls;
  std::string password_file;
  std::string connect_timeout = format_duration(k_default_connect_timeout);
  std::string io_timeout = format_duration(k_default_io_timeout);
  std::string tls_ca_file, tls_cert, tls_key, tls_server_name;
  bool tls_insecure = false;
  bool json = false;
  bool record_args = false;
  bool quiet = false;
  bool verbose = false;
  std::string conflict_exit_code_text; // -E as given ("": not given)
  std::string sync_replicas;
};

// Declares the global options on the program's CLI11 app.
void add_global_flags(CLI::App& app, GlobalFlags& raw);
// Sets inv.global (and inv.warnings, inv.history: the optional features'
// settings) from the global options and the environment. Throws UsageError.
void convert_global(const GlobalFlags& raw, Invocation& inv, Env env);

// The shared flags' values as CLI11 fills them (one set per parse).
struct SharedFlags {
  std::vector<std::string> names;
  std::string name; // add_name's
  std::string owner;
  std::string ttl;
  std::string wait;
  bool no_wait = false;
  bool fair = false;
  bool shared = false;
  bool write = false;
  std::string limit;
};

// NAME... (CLI11's option, for more rules).
CLI::Option* add_names(CLI::App& sub, SharedFlags& raw, const std::string& help, bool required);
// NAME, exactly one (a second is "not expected").
void add_name(CLI::App& sub, SharedFlags& raw, const std::string& help);
// --ttl DUR.
void add_ttl(CLI::App& sub, SharedFlags& raw, const std::string& help);
// -w/--wait DUR and -n/--no-wait.
void add_wait_flags(CLI::App& sub, SharedFlags& raw);
// MODE: [--fair | -s/--shared | --write | --limit N], each excluding the others.
void add_mode_flags(CLI::App& sub, SharedFlags& raw);
// --owner TOKEN.
void add_owner(CLI::App& sub, SharedFlags& raw, const std::string& help);

// Sets Invocation's common fields from the shared flags (names as given, mode,
// owner, ttl, wait); the names' own checks come after the subcommand's
// conversion (check_names). Throws UsageError.
void convert_shared(const SharedFlags& raw, Invocation& inv, Env env);
// The checks of NAME... by the row's columns (valid names; takes_lock_names:
// at most 64, none twice, no comma with several; otherwise each shown once)
// and its needs_owner. Throws UsageError.
void check_names(Invocation& inv);

// "(default 30s)" for a help line.
std::string default_of(Millis value);
// The help's footer: durations, the exit codes (the program's, or `row`'s
// own: Subcommand::exits, its codes filled in from ExitCode), rlock(1).
std::string exit_footer(const Subcommand* row = nullptr);

// A duration flag's value, nullopt when not given ("").
std::optional<Millis> optional_duration(const std::string& text, std::string_view flag);
// status and check: NAMEs or --match PATTERN, not both.
void names_or_match(const Invocation& inv, const std::string& match);

} // namespace rlock::cli
