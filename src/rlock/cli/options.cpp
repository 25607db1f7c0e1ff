#include <rlock/cli/options.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/core/version.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/redis/url.hpp>

#include <cctype>
#include <charconv>

// CLI11 includes <iostream>, and with libstdc++ before GCC 13 every file that
// does holds a static std::ios_base::Init, which builds cin/cout/cerr and
// their locale at each start of rlock, before main, for streams rlock never
// uses (it writes through fmt and its own log sink; CLI11 writes to std::cout
// only from App::exit and for deprecated or retired options, which rlock has
// not). So CLI11 gets the declarations of <iostream> without that object.
#include <istream>
#include <ostream>
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_IOSTREAM)
#define _GLIBCXX_IOSTREAM 1
namespace std {
extern istream cin;
extern ostream cout;
extern ostream cerr;
extern ostream clog;
} // namespace std
#endif
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

namespace rlock::cli {

namespace {

// Raw option values as CLI11 fills them; converted and checked after parsing.
struct Raw {
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
  int conflict_exit_code = k_default_conflict_exit_code;
  std::string sync_replicas;

  std::vector<std::string> names;
  std::string owner;
  std::string ttl;
  std::string wait;
  bool no_wait = false;
  bool all = false;
  bool if_dead = false;
  std::string match;
  std::string watch; // "" unless --watch was given (k_default_watch when given without DUR)
  bool list_names = false;
  std::string format;
  std::string output;
  std::string held_longer;
  bool dead_holder = false;
  std::string waiters;
  bool ttl_none = false;
  std::string done_within;
  std::string on_lost = "term";
  std::string kill_after = format_duration(k_default_kill_after);
  std::string hold_min;
  std::string max_hold;
  bool wait_descendants = false;
  std::string once_per;
  std::string if_unavailable = "fail";
  bool fair = false;
  bool shared = false;
  bool write = false;
  std::string limit;
  std::string history_name;  // history NAME (one)
  std::string history_limit; // history --limit N
  bool utc = false;          // history --utc
};

// history --limit N: 1 to 10000 events.
int history_limit(const std::string& text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 10'000) {
    throw UsageError(fmt::format("history --limit: {} is not a whole number from 1 to 10000", quote(text)));
  }
  return static_cast<int>(value);
}

// How the history is kept (lock/history.hpp): RLOCK_HISTORY_MAXLEN (events
// kept, about; 0: write none) and RLOCK_HISTORY_TTL (its lifetime after the
// last event, a duration). History is optional: a bad value is never a usage
// error (it would stop a release, issue 30); it is said in `warnings` and the
// default is kept.
lock::HistorySettings history_settings(const char* (*env)(const char*), std::vector<std::string>& warnings) {
  lock::HistorySettings settings;
  if (const char* max = env("RLOCK_HISTORY_MAXLEN"); max != nullptr && *max != '\0') {
    std::string_view text(max);
    long long value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 1'000'000) {
      warnings.push_back(fmt::format("RLOCK_HISTORY_MAXLEN: {} is not a whole number from 0 to 1000000; using {}",
                                     quote(text), settings.max_len));
    } else {
      settings.max_len = value;
    }
  }
  if (const char* ttl = env("RLOCK_HISTORY_TTL"); ttl != nullptr && *ttl != '\0') {
    try {
      settings.ttl = parse_duration(ttl, "RLOCK_HISTORY_TTL");
    } catch (const UsageError& e) {
      warnings.push_back(fmt::format("{}; using {}", e.what(), format_duration(settings.ttl)));
    }
  }
  return settings;
}

// --record-args, else RLOCK_RECORD_ARGS ("1" records them, "0" or "" not): an
// optional feature's setting, so a bad value is a warning and the default (off).
bool record_args(bool flag, const char* (*env)(const char*), std::vector<std::string>& warnings) {
  if (flag) {
    return true;
  }
  const char* value = env("RLOCK_RECORD_ARGS");
  if (value == nullptr || *value == '\0' || std::string_view(value) == "0") {
    return false;
  }
  if (std::string_view(value) == "1") {
    return true;
  }
  warnings.push_back(fmt::format("RLOCK_RECORD_ARGS: {} is neither 1 nor 0; arguments are not recorded", quote(value)));
  return false;
}

// At most this many names in one command (all or none).
constexpr int k_max_names = 64;
// --limit N: at most this many permits.
constexpr long long k_max_limit = 10'000;

// status --watch: the shortest DUR it takes (without DUR: k_default_watch).
constexpr Millis k_min_watch{100};

// The shortest lease `run` accepts: renewals every TTL/3 must fit round trips
// and scheduling delays with room to spare.
constexpr Millis k_min_run_ttl{500};

// The help's footer: the exit codes from ExitCode itself.
std::string footer() {
  auto code = [](ExitCode exit) { return static_cast<int>(exit); };
  return fmt::format("Durations: 500ms, 30s, 5m, 2h, 1h30m, 1d, or seconds (0.5).\n"
                     "Exit status: {} ok, {} not held, {} usage, {} Redis unavailable, {} internal, {} busy\n"
                     "(-E), {} lock lost (while CMD ran, or while waiting for more names), {} auth\n"
                     "denied; run exits with CMD's status; check with 0-3 (Monitoring Plugins).\n"
                     "See rlock(1) for the data format, the environment and safety notes.",
                     code(ExitCode::ok), code(ExitCode::not_held), code(ExitCode::usage),
                     code(ExitCode::unavailable), code(ExitCode::software), code(ExitCode::busy),
                     code(ExitCode::lost), code(ExitCode::denied));
}

// "(default 30s)" for a help line.
std::string default_of(Millis value) {
  return fmt::format("(default {})", format_duration(value));
}

struct App {
  CLI::App app{"rlock: distributed locks in Redis for shell scripts, cron and CI, "
               "compatible with Redisson's RLock.",
               "rlock"};
  Raw raw;
  std::map<std::string, CLI::App*, std::less<>> subs;
};

void add_wait_flags(CLI::App* sub, Raw& raw) {
  auto* wait = sub->add_option("-w,--wait", raw.wait, "Wait up to DUR for the lock (0: try once)")->type_name("DUR");
  auto* no_wait =
      sub->add_flag("-n,--no-wait", raw.no_wait, "Do not wait: fail at once if the lock is busy (default)");
  wait->excludes(no_wait);
}

// MODE: [--fair | -s/--shared | --write | --limit N]
void add_mode_flags(CLI::App* sub, Raw& raw) {
  auto* fair = sub->add_flag("--fair", raw.fair,
                             "Fair lock: waiters get it in arrival order (Redisson RFairLock)");
  auto* shared = sub->add_flag("-s,--shared", raw.shared,
                               "Shared (read) lock: many holders, no writer (Redisson RReadWriteLock read side)");
  auto* write = sub->add_flag("--write", raw.write,
                              "Write lock: one holder, no readers (Redisson RReadWriteLock write side)");
  auto* limit = sub->add_option("--limit", raw.limit,
                                "At most N holders at once, each with its own lease "
                                "(Redisson RPermitExpirableSemaphore)")
                    ->type_name("N");
  std::vector<CLI::Option*> modes{fair, shared, write, limit};
  for (auto* a : modes) {
    for (auto* b : modes) {
      if (a != b) {
        a->excludes(b);
      }
    }
  }
}

void add_owner(CLI::App* sub, Raw& raw, const char* what) {
  sub->add_option("--owner", raw.owner, what)->type_name("TOKEN");
}

std::unique_ptr<App> make_app() {
  auto a = std::make_unique<App>();
  auto& app = a->app;
  auto& raw = a->raw;
  app.set_version_flag("--version", version_text(false),
                       "Print the version and the git revision it was built from (with --json: as JSON)");
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(footer());
  app.get_formatter()->column_width(32);

  app.add_option("-u,--url", raw.urls,
                 "Redis URL: redis://[[user]:password@]host[:port][/db] (a server, or any Cluster node), "
                 "redis-cluster://[[user]:password@]host[:port][,...] (a Cluster's seed nodes, tried in turn), "
                 "redis-sentinel://[[user]:password@]host[:port][,...]/MASTER[/db] or unix:///path[?db=N]; "
                 "rediss://, rediss-cluster:// and rediss-sentinel:// with TLS; "
                 "several: one Redlock over independent masters, each server once "
                 "(env RLOCK_URL, comma-separated; REDIS_URL; default redis://127.0.0.1:6379)")
      ->type_name("URL");
  app.add_option("--password-file", raw.password_file,
                 "Read the password from FILE (env RLOCK_PASSWORD, REDISCLI_AUTH)")
      ->type_name("FILE");
  app.add_option("--connect-timeout", raw.connect_timeout, "Connect timeout " + default_of(k_default_connect_timeout))
      ->type_name("DUR");
  app.add_option("--io-timeout", raw.io_timeout, "Timeout of each request " + default_of(k_default_io_timeout))
      ->type_name("DUR");
  app.add_option("--sync-replicas", raw.sync_replicas,
                 "After acquire and each renewal, wait until N replicas have the lock, at most DUR "
                 "(default 1s); fewer: exit 69. Default: 1 replica within a tenth of the TTL (at most 1s) "
                 "when the primary has replicas, none without; 0: no wait (env RLOCK_SYNC_REPLICAS)")
      ->type_name("N[/DUR]");
  app.add_option("--tls-ca-file", raw.tls_ca_file,
                 "TLS: trust the CAs of this PEM file instead of the system's (env RLOCK_TLS_CA_FILE)")
      ->type_name("FILE");
  app.add_option("--tls-cert", raw.tls_cert,
                 "TLS: client certificate (PEM) for servers that ask for one; with --tls-key "
                 "(env RLOCK_TLS_CERT)")
      ->type_name("FILE");
  app.add_option("--tls-key", raw.tls_key,
                 "TLS: the client certificate's private key (PEM) (env RLOCK_TLS_KEY)")
      ->type_name("FILE");
  app.add_option("--tls-server-name", raw.tls_server_name,
                 "TLS: the name (or IP) the server's certificate must carry, also sent as SNI; default: "
                 "the host connected to (env RLOCK_TLS_SERVER_NAME)")
      ->type_name("NAME");
  app.add_flag("--tls-insecure", raw.tls_insecure,
               "TLS: do not verify the server's certificate (warns; env RLOCK_TLS_INSECURE=1)");
  app.add_flag("--json", raw.json, "Machine-readable output: one JSON document on stdout");
  app.add_flag("--record-args", raw.record_args,
               "Record the command's arguments in the lock's record and history (default: the program "
               "only, each argument as ***; env RLOCK_RECORD_ARGS=1)");
  app.add_flag("-q,--quiet", raw.quiet, "No warnings or progress on stderr");
  app.add_flag("-v,--verbose", raw.verbose, "Log each Redis request and reply to stderr");
  app.add_option("-E,--conflict-exit-code", raw.conflict_exit_code,
                 fmt::format("Exit code when the lock is busy or the wait ran out (default {})",
                             k_default_conflict_exit_code))
      ->type_name("N");

  for (const auto& sub : subcommands()) {
    a->subs[std::string(sub.name)] = app.add_subcommand(std::string(sub.name), std::string(sub.summary));
  }

  auto* acquire = a->subs["acquire"];
  acquire->add_option("NAME", raw.names, "Lock name (the Redis key); several: all or none")->required();
  acquire->add_option("--ttl", raw.ttl, "Lease: the lock expires unless renewed " + default_of(k_default_lease))
      ->type_name("DUR");
  add_wait_flags(acquire, raw);
  add_mode_flags(acquire, raw);
  add_owner(acquire, raw, "Owner token (env RLOCK_OWNER; default: a new random token)");

  auto* release = a->subs["release"];
  release->add_option("NAME", raw.names, "Lock name")->required();
  add_owner(release, raw, "Owner token printed by acquire (env RLOCK_OWNER)");
  release->add_flag("--all", raw.all, "Release every reentry level, not just one");
  add_mode_flags(release, raw);

  auto* renew = a->subs["renew"];
  renew->add_option("NAME", raw.names, "Lock name")->required();
  add_owner(renew, raw, "Owner token printed by acquire (env RLOCK_OWNER)");
  renew->add_option("--ttl", raw.ttl, "New lease (default: the lease it was taken with)")->type_name("DUR");
  add_mode_flags(renew, raw);

  auto* status = a->subs["status"];
  status->add_option("NAME", raw.names, "Locks to show (default: every lock found)");
  status->add_option("--match", raw.match, "Glob pattern of lock names to list (SCAN MATCH)")
      ->type_name("PATTERN");
  status->add_option("--watch", raw.watch,
                     fmt::format("Redraw every DUR {} until Ctrl-C; off a terminal, one snapshot per DUR",
                                 default_of(k_default_watch)))
      ->expected(0, 1)
      ->default_str(format_duration(k_default_watch))
      ->option_text("[DUR]");
  // For the shell completions only, so hidden from --help (group ""): the names
  // of the locks found, one a line, nothing else (rlock(1), FILES).
  status->add_flag("--names", raw.list_names, "Print only the names of the locks found, one a line")
      ->group("");

  status->add_option("--format", raw.format,
                     "Output: text (a table), json (as --json) or openmetrics (the Prometheus text format, "
                     "for node_exporter's textfile collector)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "openmetrics"}));
  status->add_option("--output", raw.output,
                     "Write the json or openmetrics output to FILE atomically (a temp file beside it, then "
                     "renamed) instead of stdout")
      ->type_name("FILE");

  auto* check = a->subs["check"];
  check->add_option("NAME", raw.names, "Locks to check (default: every lock found, or those of --match)");
  check->add_option("--match", raw.match, "Check every lock whose name matches this glob (as status --match)")
      ->type_name("PATTERN");
  check->add_option("--held-longer", raw.held_longer,
                    "WARNING when a lock is held for more than WARN, CRITICAL for more than CRIT")
      ->type_name("WARN,CRIT");
  check->add_flag("--dead-holder", raw.dead_holder,
                  "CRITICAL when force-unlock --if-dead would remove a lock: its holder process on this host "
                  "is gone");
  check->add_option("--waiters", raw.waiters,
                    "WARNING when more than WARN waiters queue for a fair lock, CRITICAL for more than CRIT")
      ->type_name("WARN,CRIT");
  check->add_flag("--ttl-none", raw.ttl_none, "CRITICAL when a lock is held without an expiry");
  check->add_option("--done-within", raw.done_within,
                    "For run --once-per jobs: CRITICAL when NAME's last completion is older than DUR, or none "
                    "is recorded")
      ->type_name("DUR");
  check->footer("Exit status (Monitoring Plugins): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (Redis\n"
                "unreachable, denied, a usage error); one line on stdout: RLOCK STATE - ... | perfdata.\n"
                "-E does not apply.");

  auto* force = a->subs["force-unlock"];
  force->add_option("NAME", raw.names, "Lock name")->required()->expected(1);
  force->add_flag(
      "--if-dead", raw.if_dead,
      "Remove it only when its recorded holder process on this host is gone (exit 1 and why if not)");

  auto* history = a->subs["history"];
  history->add_option("NAME", raw.history_name, "Lock name (one)")->required();
  history->add_option("--limit", raw.history_limit, "Show the newest N events (default 20, at most 10000)")
      ->type_name("N");
  history->add_flag("--utc", raw.utc, "Times in UTC (default: local time)");

  // doctor: no options of its own (the global ones: -u, --json).

  auto* run = a->subs["run"];
  run->add_option("NAME", raw.names, "Lock name; several: all or none")->required();
  run->add_option("--ttl", raw.ttl, "Lease, renewed every TTL/3 while CMD runs " + default_of(k_default_lease))
      ->type_name("DUR");
  add_wait_flags(run, raw);
  add_mode_flags(run, raw);
  run->add_option("--on-lost", raw.on_lost,
                  "When the lock is lost: term (SIGTERM, then SIGKILL), kill, or ignore (default term)")
      ->type_name("POLICY")
      ->check(CLI::IsMember({"term", "kill", "ignore"}));
  run->add_option("--kill-after", raw.kill_after,
                  "SIGKILL this long after SIGTERM when stopping CMD " + default_of(k_default_kill_after))
      ->type_name("DUR");
  run->add_option("--hold-min", raw.hold_min,
                  "Keep the lock until DUR after acquisition even if CMD ends sooner")
      ->type_name("DUR");
  run->add_option("--max-hold", raw.max_hold, "Stop CMD as for a lost lock after holding DUR")
      ->type_name("DUR");
  run->add_flag("--wait-descendants", raw.wait_descendants,
                "When CMD exits, keep the lock until what it left running ends (default: stop them)");
  run->add_option("--once-per", raw.once_per,
                  "Run CMD at most once per DUR-long window (windows since the Unix epoch on the Redis "
                  "server's clock: 1d = a UTC day): after CMD exits 0 the window is recorded as done; a "
                  "later run of NAME in it, on any host, runs nothing and exits 0")
      ->type_name("DUR");
  run->add_option("--if-unavailable", raw.if_unavailable,
                  "When Redis cannot be reached to take the lock: fail (exit 69), skip (run nothing, exit 0) "
                  "or run (CMD without a lock, RLOCK_UNLOCKED=1) (default fail)")
      ->type_name("WHAT")
      ->check(CLI::IsMember({"fail", "skip", "run"}));
  run->footer(
      std::string("Then: -- CMD [ARG...]  the command to run under the lock (searched in PATH),\n"
                  "with RLOCK_NAME, RLOCK_OWNER, RLOCK_FENCE and RLOCK_URL in its environment\n"
                  "(several NAMEs: RLOCK_NAME and RLOCK_FENCE list them, comma-separated;\n"
                  "a TLS URL: RLOCK_TLS_* too; run without a lock by --if-unavailable run:\n"
                  "RLOCK_OWNER and RLOCK_FENCE empty, RLOCK_UNLOCKED=1).\n"
                  "rlock exits with CMD's status. A NAME that starts with '-': run -- -NAME -- CMD.\n\n") +
      footer());
  return a;
}

// An option given with an empty value (`--ttl ''`, `--owner "$UNSET"`) is a
// mistake, never a request for the default.
void reject_empty_values(const CLI::App& app) {
  auto check = [](const CLI::App* level) {
    for (const auto* opt : level->get_options()) {
      if (opt->count() == 0 || opt->get_type_size() == 0) {
        continue;
      }
      for (const auto& value : opt->results()) {
        if (value.empty()) {
          std::string name = opt->get_lnames().empty() ? opt->get_name() : "--" + opt->get_lnames().front();
          throw UsageError(fmt::format("{}: empty value", name));
        }
      }
    }
  };
  check(&app);
  for (const auto* sub : app.get_subcommands()) {
    check(sub);
  }
}

// --sync-replicas N[/DUR] (or RLOCK_SYNC_REPLICAS, named by `source`)
redis::SyncReplicas parse_sync_replicas(const std::string& text, const char* source) {
  redis::SyncReplicas sync;
  auto slash = text.find('/');
  std::string count = text.substr(0, slash);
  int value = -1;
  auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), value);
  if (ec != std::errc() || ptr != count.data() + count.size() || value < 0 || value > 1000) {
    throw UsageError(fmt::format("{}: '{}' is not N or N/DUR (N: 0-1000 replicas, e.g. 1/500ms; 0: no wait)",
                                 source, printable(text)));
  }
  sync.count = value;
  if (slash != std::string::npos) {
    sync.timeout = parse_duration(text.substr(slash + 1), source);
  }
  return sync;
}

lock::ModeSpec parse_mode(const Raw& raw) {
  lock::ModeSpec mode;
  if (raw.fair) {
    mode.mode = lock::Mode::fair;
  } else if (raw.shared) {
    mode.mode = lock::Mode::read;
  } else if (raw.write) {
    mode.mode = lock::Mode::write;
  } else if (!raw.limit.empty()) {
    mode.mode = lock::Mode::limit;
    long long value = 0;
    auto [ptr, ec] = std::from_chars(raw.limit.data(), raw.limit.data() + raw.limit.size(), value);
    if (ec != std::errc() || ptr != raw.limit.data() + raw.limit.size() || value < 1 || value > k_max_limit) {
      throw UsageError(fmt::format("--limit: '{}' is not a number of holders from 1 to {}", printable(raw.limit),
                                   k_max_limit));
    }
    mode.limit = value;
  }
  return mode;
}

// status --watch [DUR]: the interval. A value that is no duration is the first
// lock name (`status --watch deploy`: CLI11 gave it to --watch).
Millis watch_interval(const std::string& value, std::vector<std::string>& names) {
  Millis interval{};
  try {
    interval = parse_duration(value, "--watch");
  } catch (const UsageError&) {
    if (value.front() == '-' || std::isdigit(static_cast<unsigned char>(value.front()))) {
      throw; // a mistyped duration, not a name
    }
    names.insert(names.begin(), value);
    interval = k_default_watch;
  }
  if (interval < k_min_watch) {
    throw UsageError(fmt::format("--watch: {} is too short a redraw interval (at least {})", format_duration(interval),
                                 format_duration(k_min_watch)));
  }
  return interval;
}

// An environment variable's value, or "" when unset.
std::string env_value(const char* (*env)(const char*), const char* name) {
  const char* value = env(name);
  return value != nullptr ? value : "";
}

// --tls-* and their RLOCK_TLS_* defaults, when a URL uses TLS. A flag with no
// TLS URL is a mistake; the variables then do nothing (a `run` child of a TLS
// rlock may well use a plain URL).
std::optional<redis::TlsOptions> parse_tls(const Raw& raw, const std::vector<std::string>& urls,
                                           const char* (*env)(const char*)) {
  bool uses_tls = false;
  for (const auto& url : urls) {
    uses_tls = uses_tls || redis::parse_url(url).tls.has_value();
  }
  std::pair<const char*, bool> flags[] = {{"--tls-ca-file", !raw.tls_ca_file.empty()},
                                          {"--tls-cert", !raw.tls_cert.empty()},
                                          {"--tls-key", !raw.tls_key.empty()},
                                          {"--tls-server-name", !raw.tls_server_name.empty()},
                                          {"--tls-insecure", raw.tls_insecure}};
  if (!uses_tls) {
    for (const auto& [flag, given] : flags) {
      if (given) {
        throw UsageError(fmt::format("{}: no URL uses TLS; TLS needs rediss://HOST[:PORT], "
                                     "rediss-cluster://HOST[:PORT][,...] or "
                                     "rediss-sentinel://HOST[:PORT][,...]/MASTER (the URL is {})",
                                     flag, printable(redis::without_password(urls.front()))));
      }
    }
    return std::nullopt;
  }
  redis::TlsOptions tls;
  auto pick = [&](const std::string& flag, const char* variable) {
    return flag.empty() ? env_value(env, variable) : flag;
  };
  tls.ca_file = pick(raw.tls_ca_file, "RLOCK_TLS_CA_FILE");
  tls.cert = pick(raw.tls_cert, "RLOCK_TLS_CERT");
  tls.key = pick(raw.tls_key, "RLOCK_TLS_KEY");
  tls.server_name = pick(raw.tls_server_name, "RLOCK_TLS_SERVER_NAME");
  tls.insecure = raw.tls_insecure;
  if (!raw.tls_insecure) {
    std::string insecure = env_value(env, "RLOCK_TLS_INSECURE");
    if (insecure == "1" || insecure == "yes" || insecure == "true") {
      tls.insecure = true;
    } else if (!insecure.empty() && insecure != "0" && insecure != "no" && insecure != "false") {
      throw UsageError(fmt::format("RLOCK_TLS_INSECURE: '{}' is not 1 or 0", printable(insecure)));
    }
  }
  if (tls.cert.empty() != tls.key.empty()) {
    throw UsageError(
        tls.cert.empty()
            ? "--tls-key: a client key needs its certificate (--tls-cert FILE or RLOCK_TLS_CERT)"
            : "--tls-cert: a client certificate needs its key (--tls-key FILE or RLOCK_TLS_KEY)");
  }
  return tls;
}

std::optional<Millis> optional_duration(const std::string& text, std::string_view flag) {
  if (text.empty()) {
    return std::nullopt;
  }
  return parse_duration(text, flag);
}

// WARN,CRIT of --held-longer (durations) or --waiters (counts), warn <= crit.
template <class T, class Parse>
Thresholds<T> parse_thresholds(const std::string& text, std::string_view flag, Parse&& parse) {
  auto comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    throw UsageError(fmt::format("{}: '{}' is not WARN,CRIT (two values, comma-separated)", flag, printable(text)));
  }
  Thresholds<T> thresholds{parse(text.substr(0, comma)), parse(text.substr(comma + 1))};
  if (thresholds.warn > thresholds.crit) {
    throw UsageError(fmt::format("{}: WARN is above CRIT in '{}'", flag, printable(text)));
  }
  return thresholds;
}

long long parse_count(const std::string& text, std::string_view flag) {
  long long value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    throw UsageError(fmt::format("{}: '{}' is not a count (0 or more)", flag, printable(text)));
  }
  return value;
}

// status --format and --output.
void convert_status_output(const Raw& raw, Invocation& inv) {
  if (raw.format.empty() || raw.format == "text") {
    inv.format = inv.global.json ? StatusFormat::json : StatusFormat::text;
    if (inv.global.json && raw.format == "text") {
      throw UsageError("status: --json and --format text exclude each other");
    }
  } else {
    inv.format = raw.format == "json" ? StatusFormat::json : StatusFormat::openmetrics;
    if (inv.global.json && inv.format != StatusFormat::json) {
      throw UsageError(fmt::format("status: --json and --format {} exclude each other", raw.format));
    }
    inv.global.json = inv.format == StatusFormat::json; // --format json is --json
  }
  if (!raw.output.empty()) {
    inv.output = raw.output;
    if (inv.format == StatusFormat::text) {
      throw UsageError("status --output writes --format json or openmetrics (the table is for people)");
    }
  }
  if ((inv.output || inv.format == StatusFormat::openmetrics) && (inv.watch || inv.list_names)) {
    throw UsageError(fmt::format("status {} takes no {}", inv.output ? "--output" : "--format openmetrics",
                                 inv.watch ? "--watch (run it from cron or a timer instead)" : "--names"));
  }
}

// check's thresholds.
void convert_check(const Raw& raw, Invocation& inv) {
  auto& spec = inv.check;
  if (!raw.held_longer.empty()) {
    spec.held_longer = parse_thresholds<Millis>(
        raw.held_longer, "--held-longer", [](const std::string& text) { return parse_duration(text, "--held-longer"); });
  }
  if (!raw.waiters.empty()) {
    spec.waiters = parse_thresholds<long long>(
        raw.waiters, "--waiters", [](const std::string& text) { return parse_count(text, "--waiters"); });
  }
  spec.dead_holder = raw.dead_holder;
  spec.ttl_none = raw.ttl_none;
  if (!raw.done_within.empty()) {
    spec.done_within = parse_duration(raw.done_within, "--done-within");
  }
  if (inv.sub->name != "check") {
    return;
  }
  if (inv.global.json) {
    throw UsageError("check prints the Monitoring Plugins' line; it has no --json (see status --json)");
  }
  if (spec.dead_holder && inv.global.urls.size() > 1) {
    throw UsageError("--dead-holder takes one URL, as force-unlock --if-dead: a Redlock's holder record is per master");
  }
  if (spec.done_within && inv.global.urls.size() > 1) {
    throw UsageError("--done-within takes one URL, as run --once-per: a Redlock has no one place for the record");
  }
  if (spec.done_within && inv.names.empty()) {
    throw UsageError("--done-within needs the jobs' NAMEs: --match lists only locks held now, and a job that "
                     "is not running holds none");
  }
}

Invocation convert(const App& a, std::vector<std::string> child_argv, const char* (*env)(const char*)) {
  const Raw& raw = a.raw;
  Invocation inv;
  std::string sub_name = a.app.get_subcommands().front()->get_name();
  inv.sub = find_subcommand(sub_name);

  auto& g = inv.global;
  g.urls = redis::choose_urls(raw.urls, env);
  std::vector<redis::Endpoint> masters;
  std::vector<std::vector<std::string>> keys;
  for (const auto& url : g.urls) {
    masters.push_back(redis::parse_url(url)); // throws a usage error for a bad one
    g.password_in_argv = g.password_in_argv || (!raw.urls.empty() && masters.back().password.has_value());
    keys.push_back({redis::server_key(masters.back())});
  }
  // A Redlock counts votes per master: the same server twice (another db, user
  // or spelling of the host included) would be a fake majority. Names that
  // differ but resolve to one address are caught by lock::make_store.
  if (auto twice = redis::same_server(keys)) {
    throw UsageError(redis::same_server_message(masters[twice->first], masters[twice->second], ""));
  }
  g.tls = parse_tls(raw, g.urls, env);
  if (!raw.password_file.empty()) {
    g.password_file = raw.password_file;
  } else if (const char* file = env("RLOCK_PASSWORD_FILE"); file != nullptr && *file != '\0') {
    g.password_file = file;
  }
  g.connect_timeout = parse_duration(raw.connect_timeout, "--connect-timeout");
  g.io_timeout = parse_duration(raw.io_timeout, "--io-timeout");
  g.json = raw.json;
  g.record_args = record_args(raw.record_args, env, inv.warnings);
  g.level = raw.quiet ? log::Level::quiet : raw.verbose ? log::Level::verbose : log::Level::normal;
  if (raw.quiet && raw.verbose) {
    throw UsageError("--quiet and --verbose exclude each other");
  }
  if (raw.conflict_exit_code < 0 || raw.conflict_exit_code > 255) {
    throw UsageError(
        fmt::format("--conflict-exit-code: {} is not an exit code (0-255)", raw.conflict_exit_code));
  }
  g.conflict_exit_code = raw.conflict_exit_code;
  if (!raw.sync_replicas.empty()) {
    g.sync_replicas = parse_sync_replicas(raw.sync_replicas, "--sync-replicas");
    g.sync_source = "--sync-replicas";
  } else if (const char* sync = env("RLOCK_SYNC_REPLICAS"); sync != nullptr && *sync != '\0') {
    g.sync_replicas = parse_sync_replicas(sync, "RLOCK_SYNC_REPLICAS");
    g.sync_source = "RLOCK_SYNC_REPLICAS";
  }

  inv.names = raw.names;
  if (!raw.history_name.empty()) {
    inv.names.push_back(raw.history_name);
  }
  if (!raw.watch.empty()) {
    inv.watch = watch_interval(raw.watch, inv.names);
  }
  for (const auto& name : inv.names) {
    lock::keys_for(name); // throws a usage error for a bad name
  }
  if (inv.names.size() > static_cast<std::size_t>(k_max_names) && inv.sub->takes_lock_names) {
    throw UsageError(fmt::format("{} names given; at most {} are taken at once", inv.names.size(), k_max_names));
  }
  if (!inv.sub->takes_lock_names) {
    // status, check: a name given twice is shown (a series, a perfdata label) once.
    std::vector<std::string> once;
    for (const auto& name : inv.names) {
      if (std::find(once.begin(), once.end(), name) == once.end()) {
        once.push_back(name);
      }
    }
    inv.names = std::move(once);
  }
  if (inv.names.size() > 1 && inv.sub->takes_lock_names) {
    auto sorted = inv.names;
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end()) {
      throw UsageError(fmt::format("lock {} is named twice", quote(*twice)));
    }
    for (const auto& name : inv.names) {
      if (name.find(',') != std::string::npos) {
        throw UsageError(fmt::format("lock name {} has a comma: with several names, RLOCK_NAME lists them "
                                     "comma-separated; take it on its own",
                                     quote(name)));
      }
    }
  }
  inv.mode = parse_mode(raw);
  if (inv.mode.mode != lock::Mode::exclusive && g.urls.size() > 1) {
    throw UsageError(fmt::format("--{}: modes need one deployment (a server, a Cluster or a Sentinel primary); "
                                 "a Redlock over several masters takes exclusive locks only",
                                 mode_word(inv.mode.mode)));
  }
  inv.owner = raw.owner;
  if (inv.owner.empty()) {
    if (const char* owner = env("RLOCK_OWNER"); owner != nullptr) {
      inv.owner = owner;
    }
  }
  if (!inv.owner.empty()) {
    lock::check_owner_token(inv.owner, raw.owner.empty() ? "RLOCK_OWNER" : "--owner");
  }
  if (inv.mode.mode == lock::Mode::read && inv.owner.ends_with(":write")) {
    throw UsageError(fmt::format("{}: owner token {} ends with ':write', which names a writer's field of a "
                                 "read-write lock; a reader's token cannot",
                                 raw.owner.empty() ? "RLOCK_OWNER" : "--owner", quote(inv.owner)));
  }
  inv.ttl = optional_duration(raw.ttl, "--ttl");
  // -w 0 tries once, as flock -w 0 does.
  if (!raw.wait.empty() && parse_duration(raw.wait, "--wait", true) > Millis(0)) {
    inv.wait = parse_duration(raw.wait, "--wait");
  }
  inv.all = raw.all;
  inv.history = history_settings(env, inv.warnings);
  inv.utc = raw.utc;
  if (!raw.history_limit.empty()) {
    inv.history_limit = history_limit(raw.history_limit);
  }
  inv.if_dead = raw.if_dead;
  if (inv.if_dead && inv.global.urls.size() > 1) {
    throw UsageError("--if-dead takes one URL: a Redlock's holder record is per master");
  }
  inv.match = raw.match;
  if (!inv.match.empty() && !inv.names.empty()) {
    throw UsageError(fmt::format("{}: give lock names or --match, not both", sub_name));
  }
  inv.list_names = raw.list_names;
  if (inv.list_names && !inv.names.empty()) {
    throw UsageError("status --names lists the locks found (all, or those of --match PATTERN), not named ones");
  }
  if (inv.list_names && inv.watch) {
    throw UsageError("status --names prints the names once; it does not take --watch");
  }
  convert_status_output(raw, inv);
  convert_check(raw, inv);
  inv.on_lost = raw.on_lost == "kill"     ? run::OnLost::kill
                : raw.on_lost == "ignore" ? run::OnLost::ignore
                                          : run::OnLost::term;
  inv.kill_after = parse_duration(raw.kill_after, "--kill-after");
  inv.hold_min = optional_duration(raw.hold_min, "--hold-min");
  inv.max_hold = optional_duration(raw.max_hold, "--max-hold");
  inv.wait_descendants = raw.wait_descendants;
  inv.once_per = optional_duration(raw.once_per, "--once-per");
  if (inv.once_per) {
    // The record lives in one place, beside one exclusive lock: a shared mode
    // would let several hosts run the job at once, and a Redlock has no one
    // place for it.
    if (inv.names.size() > 1) {
      throw UsageError("--once-per takes one NAME: the record of a done job is kept beside one lock");
    }
    if (inv.mode.mode != lock::Mode::exclusive && inv.mode.mode != lock::Mode::fair) {
      // Each mode's own reason: --write is exclusive too, but not a plain lock.
      const auto mode = inv.mode.mode;
      const std::string why =
          mode == lock::Mode::read ? "a shared lock lets several hosts run it at once"
          : mode == lock::Mode::write
              ? "--write is exclusive, but it takes the write side of a read-write lock, and the "
                "completion is recorded only beside a plain lock's holder"
              : "--limit N lets N holders run it at once";
      throw UsageError(fmt::format("--once-per with --{}: a once-per-window job needs a plain or --fair lock; {}",
                                   mode_word(mode), why));
    }
    if (g.urls.size() > 1) {
      throw UsageError("--once-per takes one URL: a Redlock over several masters has no one place for the "
                       "record of a done job");
    }
  }
  inv.if_unavailable = raw.if_unavailable == "skip"  ? IfUnavailable::skip
                       : raw.if_unavailable == "run" ? IfUnavailable::run
                                                     : IfUnavailable::fail;

  if (inv.sub->needs_owner && inv.owner.empty()) {
    throw UsageError(
        fmt::format("{}: which owner? give --owner TOKEN (printed by acquire) or set RLOCK_OWNER", sub_name));
  }
  if (inv.sub->takes_command) {
    inv.child_argv = child_argv;
    if (inv.child_argv.empty()) {
      throw UsageError("run: no command given (rlock run NAME -- CMD [ARG...])");
    }
    if (inv.max_hold && inv.hold_min && *inv.hold_min > *inv.max_hold) {
      throw UsageError("run: --hold-min is longer than --max-hold");
    }
    if (inv.ttl && *inv.ttl < k_min_run_ttl) {
      throw UsageError(
          fmt::format("--ttl: {} is too short for run: a lease under {} cannot be renewed reliably",
                      format_duration(*inv.ttl), format_duration(k_min_run_ttl)));
    }
  }
  return inv;
}

} // namespace

namespace {

// Where the words of argv are, read the way CLI11 will read them (an option
// that takes a value consumes the next word unless written --opt=value).
struct ArgvShape {
  int subcommand = 0;       // index of the first positional word (0: none)
  int separator = 0;        // run: index of the "--" that starts CMD (0: none)
  bool name_before = false; // a positional word (NAME) precedes the first "--"
  int stray_option = 0;     // index of an unknown option before the subcommand
};

ArgvShape shape_of(const App& a, int argc, const char* const* argv) {
  ArgvShape shape;
  const CLI::App* level = &a.app;
  int first = 0;  // the first "--" after the subcommand
  int second = 0; // the one after it
  for (int i = 1; i < argc; ++i) {
    std::string_view arg(argv[i]);
    if (arg == "--") {
      if (shape.subcommand == 0 || shape.name_before || first != 0) {
        second = first != 0 ? i : 0;
        first = first != 0 ? first : i;
        break;
      }
      first = i;
      continue;
    }
    if (first != 0) {
      continue; // NAME after "--": only a second "--" matters now
    }
    if (arg.size() > 1 && arg.front() == '-') {
      std::string name(arg.substr(0, arg.find('=')));
      const CLI::Option* opt = level->get_option_no_throw(name);
      if (opt == nullptr && level != &a.app) {
        opt = a.app.get_option_no_throw(name);
      }
      if (opt == nullptr && level == &a.app && name != "-h" && name != "--help") {
        shape.stray_option = i; // its value, if any, would pass for the subcommand
        break;
      }
      bool attached = arg.find('=') != std::string_view::npos || (!arg.starts_with("--") && arg.size() > 2);
      if (opt != nullptr && opt->get_expected_min() > 0 && !attached) {
        ++i; // its value
      }
      continue;
    }
    if (shape.subcommand != 0) {
      shape.name_before = true;
      continue;
    }
    shape.subcommand = i;
    auto it = a.subs.find(arg);
    if (it == a.subs.end()) {
      break;
    }
    level = it->second;
  }
  shape.separator = shape.name_before || second == 0 ? first : second;
  return shape;
}

} // namespace

ParseResult parse(int argc, const char* const* argv, const char* (*env)(const char*)) {
  // `run NAME [OPTIONS] -- CMD [ARG...]`: everything after the "--" is the
  // command, never parsed as rlock's flags (as flock(1) does). A NAME that
  // starts with '-' comes after a "--" of its own: `run -- -x -- CMD`.
  // Other subcommands keep "--" as the end of options (`release -- -name`).
  auto a = make_app();
  const ArgvShape shape = shape_of(*a, argc, argv);
  const auto* sub = shape.subcommand != 0 ? find_subcommand(argv[shape.subcommand]) : nullptr;
  const bool is_run = sub != nullptr && sub->takes_command;
  int parsed_argc = argc;
  std::vector<std::string> child_argv;
  if (is_run && shape.separator != 0) {
    parsed_argc = shape.separator;
    child_argv.assign(argv + shape.separator + 1, argv + argc);
  }
  ParseResult result;
  const bool has_separator = parsed_argc != argc;
  try {
    a->app.parse(parsed_argc, argv);
    reject_empty_values(a->app);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* target = &a->app;
    for (const auto* chosen : a->app.get_subcommands()) {
      target = chosen;
    }
    result.output = target->help();
    return result;
  } catch (const CLI::CallForAllHelp&) {
    result.output = a->app.help("", CLI::AppFormatMode::All);
    return result;
  } catch (const CLI::CallForVersion&) {
    // --json's own value is set by a callback that may not have run yet; its count is.
    result.output = version_text(a->app.get_option("--json")->count() > 0);
    return result;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (is_run && !has_separator) {
      throw UsageError("run: put the command after '--' (rlock run NAME [OPTIONS] -- CMD [ARG...])");
    }
    if (sub == nullptr && shape.stray_option != 0) {
      what = fmt::format("'{}' is not a global option (a subcommand's options go after it, e.g. "
                         "rlock acquire NAME -w 30s)",
                         printable(argv[shape.stray_option]));
    } else if (sub == nullptr) {
      what = shape.subcommand == 0 ? std::string("no command given")
                                   : fmt::format("unknown command '{}'", printable(argv[shape.subcommand]));
      what += " (" + subcommand_names() + ")";
    } else {
      what = fmt::format("{}: {}", sub->name, what);
    }
    throw UsageError(fmt::format("{} (see rlock --help)", what));
  }
  result.invocation = convert(*a, std::move(child_argv), env);
  return result;
}

const Subcommand* subcommand_in(int argc, const char* const* argv) {
  auto a = make_app();
  const ArgvShape shape = shape_of(*a, argc, argv);
  return shape.subcommand != 0 ? find_subcommand(argv[shape.subcommand]) : nullptr;
}

std::string version_text(bool json) {
  if (json) {
    nlohmann::ordered_json doc{{"version", k_version}, {"revision", build_revision()}};
    return doc.dump() + "\n";
  }
  return fmt::format("rlock {} (git {})\n", k_version, build_revision());
}

std::string help_text(std::string_view subcommand) {
  auto a = make_app();
  if (subcommand.empty()) {
    return a->app.help();
  }
  return a->subs.at(std::string(subcommand))->help();
}

std::vector<std::string> all_long_flags() {
  auto a = make_app();
  std::vector<std::string> flags;
  auto collect = [&](const CLI::App* app) {
    for (const auto* opt : app->get_options()) {
      for (const auto& name : opt->get_lnames()) {
        flags.push_back("--" + name);
      }
    }
  };
  collect(&a->app);
  for (const auto& [name, sub] : a->subs) {
    collect(sub);
  }
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

redis::SyncReplicas sync_for(const GlobalOptions& global, Millis ttl) {
  return global.sync_replicas.automatic ? redis::SyncReplicas::automatic_for(ttl) : global.sync_replicas;
}

std::string describe_sync(const GlobalOptions& global) {
  const auto& sync = global.sync_replicas;
  if (sync.automatic) {
    return "one replica's acknowledgement within a tenth of the TTL (at most 1s) where the primary has "
           "replicas, none without (the default; --sync-replicas 0 or RLOCK_SYNC_REPLICAS=0 turns it off)";
  }
  if (sync.count <= 0) {
    return {};
  }
  return fmt::format("{} replica acknowledgement{} within {} ({})", sync.count, sync.count == 1 ? "" : "s",
                     format_duration(sync.timeout), global.sync_source);
}

} // namespace rlock::cli
