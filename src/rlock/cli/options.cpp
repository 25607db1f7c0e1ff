// The global options (-u, timeouts, TLS, --sync-replicas, -q/-v, -E,
// --json, --record-args): declared for CLI11 and converted, with the
// environment they fall back to, into GlobalOptions.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/options.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/url.hpp>

#include <fmt/format.h>

#include <charconv>

namespace rlock::cli {

namespace {

// How the history is kept (lock/history.hpp): RLOCK_HISTORY_MAXLEN (events
// kept, about; 0: write none) and RLOCK_HISTORY_TTL (its lifetime after the
// last event, a duration). History is optional: a bad value is never a usage
// error (it would stop a release, issue 30); it is said in `warnings` and the
// default is kept.
lock::HistorySettings history_settings(Env env, std::vector<std::string>& warnings) {
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
bool record_args(bool flag, Env env, std::vector<std::string>& warnings) {
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

// An environment variable's value, or "" when unset.
std::string env_value(Env env, const char* name) {
  const char* value = env(name);
  return value != nullptr ? value : "";
}

// --tls-* and their RLOCK_TLS_* defaults, when a URL uses TLS. A flag with no
// TLS URL is a mistake; the variables then do nothing (a `run` child of a TLS
// rlock may well use a plain URL).
std::optional<redis::TlsOptions> parse_tls(const GlobalFlags& raw, const std::vector<std::string>& urls, Env env) {
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

} // namespace

void add_global_flags(CLI::App& app, GlobalFlags& raw) {
  app.add_option(
         "-u,--url", raw.urls,
         fmt::format("Redis URL: redis://[[user]:password@]host[:port][/db] (a server, or any Cluster node), "
                     "redis-cluster://[[user]:password@]host[:port][,...] (a Cluster's seed nodes, tried in "
                     "turn), redis-sentinel://[[user]:password@]host[:port][,...]/MASTER[/db] or "
                     "unix:///path[?db=N]; rediss://, rediss-cluster:// and rediss-sentinel:// with TLS; "
                     "one URL per -u; repeat -u for one Redlock over independent masters, each server "
                     "once (env RLOCK_URL, comma-separated; REDIS_URL; default {})",
                     k_default_url))
      ->type_name("URL")
      ->allow_extra_args(false); // -u URL1 URL2: URL2 is the subcommand (issue 43), never a second master
  app.add_option("--password-file", raw.password_file,
                 "Read the password from FILE (env RLOCK_PASSWORD, REDISCLI_AUTH)")
      ->type_name("FILE");
  app.add_option("--connect-timeout", raw.connect_timeout, "Connect timeout " + default_of(k_default_connect_timeout))
      ->type_name("DUR");
  app.add_option("--io-timeout", raw.io_timeout, "Timeout of each request " + default_of(k_default_io_timeout))
      ->type_name("DUR");
  app.add_option("--sync-replicas", raw.sync_replicas,
                 fmt::format("After acquire and each renewal, wait until N replicas have the lock, at most DUR "
                             "{}; fewer: exit 69. Default: 1 replica within a tenth of the TTL (at most {}) "
                             "when the primary has replicas, none without; 0: no wait (env RLOCK_SYNC_REPLICAS)",
                             default_of(k_default_sync_timeout), format_duration(k_max_automatic_sync)))
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
  app.add_option("-E,--conflict-exit-code", raw.conflict_exit_code_text,
                 fmt::format("Exit code when the lock is busy or the wait ran out (default {})",
                             k_default_conflict_exit_code))
      ->type_name("N");
}

void convert_global(const GlobalFlags& raw, Invocation& inv, Env env) {
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
  if (!raw.conflict_exit_code_text.empty()) {
    // Read here, not by CLI11, so `-E abc` is told what -E takes.
    const auto& text = raw.conflict_exit_code_text;
    int value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 255) {
      throw UsageError(
          fmt::format("--conflict-exit-code: {} is not an exit code (-E takes a whole number from 0 "
                      "to 255: the status when the lock is busy or the wait ran out; default {})",
                      quote(text), k_default_conflict_exit_code));
    }
    g.conflict_exit_code = value;
  }
  if (!raw.sync_replicas.empty()) {
    g.sync_replicas = parse_sync_replicas(raw.sync_replicas, "--sync-replicas");
    g.sync_source = "--sync-replicas";
  } else if (const char* sync = env("RLOCK_SYNC_REPLICAS"); sync != nullptr && *sync != '\0') {
    g.sync_replicas = parse_sync_replicas(sync, "RLOCK_SYNC_REPLICAS");
    g.sync_source = "RLOCK_SYNC_REPLICAS";
  }
  inv.history = history_settings(env, inv.warnings);
}

redis::SyncReplicas sync_for(const GlobalOptions& global, Millis ttl) {
  return global.sync_replicas.automatic ? redis::SyncReplicas::automatic_for(ttl) : global.sync_replicas;
}

std::string describe_sync(const GlobalOptions& global) {
  const auto& sync = global.sync_replicas;
  if (sync.automatic) {
    return fmt::format("one replica's acknowledgement within a tenth of the TTL (at most {}) where the primary "
                       "has replicas, none without (the default; --sync-replicas 0 or RLOCK_SYNC_REPLICAS=0 "
                       "turns it off)",
                       format_duration(k_max_automatic_sync));
  }
  if (sync.count <= 0) {
    return {};
  }
  return fmt::format("{} replica acknowledgement{} within {} ({})", sync.count, sync.count == 1 ? "" : "s",
                     format_duration(sync.timeout), global.sync_source);
}

} // namespace rlock::cli
