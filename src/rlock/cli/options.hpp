#pragma once

// What parsing makes of argv: the global options, Invocation (the common
// fields and the subcommand's own options), parse() and the help's texts.

#include <rlock/cli/subcommands.hpp>
#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/core/log.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/redis/client.hpp>

#include <any>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

struct GlobalOptions;
// What acquire and renew ask of replicas for a lease `ttl`: --sync-replicas or
// RLOCK_SYNC_REPLICAS as given, else the automatic default for `ttl`.
redis::SyncReplicas sync_for(const GlobalOptions& global, Millis ttl);
// For `status -v`, `doctor`: which replica sync acquire and renew apply and
// where it comes from; "" when it is off.
std::string describe_sync(const GlobalOptions& global);

struct GlobalOptions {
  std::vector<std::string> urls; // as given (flags or environment), never empty
  std::optional<std::string> password_file;
  Millis connect_timeout = k_default_connect_timeout;
  Millis io_timeout = k_default_io_timeout;
  bool json = false;
  // --record-args / RLOCK_RECORD_ARGS=1: the holder record, the waiter record
  // and the history keep a command's arguments; otherwise the program only,
  // each argument as *** (cli/secrets recorded_command_line).
  bool record_args = false;
  log::Level level = log::Level::normal;
  int conflict_exit_code = k_default_conflict_exit_code;
  // --sync-replicas, else RLOCK_SYNC_REPLICAS; neither: automatic (the default
  // of issue 24: one replica's acknowledgement where the primary has replicas;
  // its timeout comes from the lease, see sync_for). count 0: none.
  redis::SyncReplicas sync_replicas{1, k_default_sync_timeout, true};
  std::string sync_source; // "--sync-replicas", "RLOCK_SYNC_REPLICAS" or "" (the default)
  // --tls-* (else RLOCK_TLS_*), for every URL that uses TLS; set only when
  // one does (rediss://, rediss-cluster://, rediss-sentinel://).
  std::optional<redis::TlsOptions> tls;
  // A -u/--url on the command line carries a password (not RLOCK_URL or
  // REDIS_URL, which stay out of `ps` and shell history): warned about once.
  bool password_in_argv = false;
};

// What parsing made of argv: the global options, the subcommand, the fields
// several subcommands share, and the subcommand's own options (`own`, typed by
// its file: cli/cmd_status.hpp StatusOptions, cli/cmd_run.hpp RunOptions...).
struct Invocation {
  GlobalOptions global;
  const Subcommand* sub = nullptr;     // never null after parse()
  std::vector<std::string> names;      // NAME... (in the order given; no name twice)
  lock::ModeSpec mode;                 // MODE flags (acquire, release, renew, run)
  std::string owner;                   // --owner / RLOCK_OWNER; "" = none given
  std::optional<Millis> ttl;           // --ttl; nullopt: k_default_lease (acquire, run), the lock's own (renew)
  std::optional<Millis> wait;          // -w; nullopt = -n (do not wait)
  std::vector<std::string> child_argv; // a row that takes_command (run): CMD ARG...
  lock::HistorySettings history;       // RLOCK_HISTORY_MAXLEN, RLOCK_HISTORY_TTL (every subcommand)
  // Bad settings of optional features (history): said once on stderr, the
  // default used; never an error (an optional feature never stops a lock).
  std::vector<std::string> warnings;
  // The subcommand's own options, as its Convert made them (empty when it has
  // none): read with own_as<T>(), T the type its file declares.
  std::any own;

  template <class T> const T& own_as() const { return std::any_cast<const T&>(own); }
};

// What parsing decided: run an invocation, or exit at once after printing
// `output` (help, version) to stdout.
struct ParseResult {
  std::optional<Invocation> invocation;
  std::string output;
  int exit_code = 0;
};

// Parses argv without side effects other than reading the environment through
// `env` (RLOCK_URL, REDIS_URL, RLOCK_OWNER, RLOCK_TLS_*). Throws UsageError
// (exit 64) for every bad flag, value, duration, URL or name, and for a
// --tls-* flag when no URL uses TLS.
ParseResult parse(int argc, const char* const* argv, Env env);

// The subcommand argv names, read as parse() reads it (nullptr: none or an
// unknown one), for the top-level handler to know, when parsing failed, how
// its row reports errors (Subcommand::on_error). No side effects.
const Subcommand* subcommand_in(int argc, const char* const* argv);

// What --version prints: "rlock 0.1.0 (git abc1234)\n", or with --json
// {"version":"0.1.0","revision":"abc1234"} and a newline (the revision: see
// core/version.hpp).
std::string version_text(bool json);

// The full help text of the program or of one subcommand (for docs checks).
std::string help_text(std::string_view subcommand);

// Every long flag name ("--ttl") the parser knows, for the docs checks.
std::vector<std::string> all_long_flags();

} // namespace rlock::cli
