#pragma once

#include <rlock/cli/subcommands.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/core/log.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/redis/client.hpp>
#include <rlock/run/policy.hpp>

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
  Millis connect_timeout{2000};
  Millis io_timeout{2000};
  bool json = false;
  log::Level level = log::Level::normal;
  int conflict_exit_code = 75;
  // --sync-replicas, else RLOCK_SYNC_REPLICAS; neither: automatic (the default
  // of issue 24: one replica's acknowledgement where the primary has replicas;
  // its timeout comes from the lease, see sync_for). count 0: none.
  redis::SyncReplicas sync_replicas{1, Millis(1000), true};
  std::string sync_source; // "--sync-replicas", "RLOCK_SYNC_REPLICAS" or "" (the default)
  // --tls-* (else RLOCK_TLS_*), for every URL that uses TLS; set only when
  // one does (rediss://, rediss-sentinel://).
  std::optional<redis::TlsOptions> tls;
  // A -u/--url on the command line carries a password (not RLOCK_URL or
  // REDIS_URL, which stay out of `ps` and shell history): warned about once.
  bool password_in_argv = false;
};

// run --if-unavailable: what to do when Redis cannot be reached to take the
// lock (an error that maps to exit 69 while acquiring; never busy, auth or usage).
enum class IfUnavailable {
  fail, // exit 69 (default)
  skip, // run nothing, exit 0 with a warning
  run,  // run CMD without a lock (RLOCK_UNLOCKED=1), exit with its status
};

// Every subcommand's options in one struct; each subcommand reads its own.
struct Invocation {
  GlobalOptions global;
  const Subcommand* sub = nullptr;     // never null after parse()
  std::vector<std::string> names;      // NAME... (in the order given; no name twice)
  lock::ModeSpec mode;                 // MODE flags (acquire, release, renew, run)
  std::string owner;                   // --owner / RLOCK_OWNER; "" = none given
  std::optional<Millis> ttl;           // --ttl; nullopt: 30s (acquire, run), the lock's own (renew)
  std::optional<Millis> wait;          // -w; nullopt = -n (do not wait)
  bool all = false;                    // release --all
  bool if_dead = false;                // force-unlock --if-dead
  std::string match;                   // status --match
  std::optional<Millis> watch;         // status --watch: redraw interval
  bool list_names = false;             // status --names (hidden: for the completions)
  run::OnLost on_lost = run::OnLost::term; // run
  Millis kill_after{10'000};           // run
  std::optional<Millis> hold_min;      // run
  std::optional<Millis> max_hold;      // run
  bool wait_descendants = false;       // run
  std::optional<Millis> once_per;      // run --once-per: the window length
  IfUnavailable if_unavailable = IfUnavailable::fail; // run
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
// `env` (RLOCK_URL, REDIS_URL, RLOCK_OWNER, RLOCK_TLS_*). Throws UsageError
// (exit 64) for every bad flag, value, duration, URL or name, and for a
// --tls-* flag when no URL uses TLS.
ParseResult parse(int argc, const char* const* argv, const char* (*env)(const char*));

// What --version prints: "rlock 0.1.0 (git abc1234)\n", or with --json
// {"version":"0.1.0","revision":"abc1234"} and a newline (the revision: see
// core/version.hpp).
std::string version_text(bool json);

// The full help text of the program or of one subcommand (for docs checks).
std::string help_text(std::string_view subcommand);

// Every long flag name ("--ttl") the parser knows, for the docs checks.
std::vector<std::string> all_long_flags();

} // namespace rlock::cli
