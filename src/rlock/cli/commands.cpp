#include <rlock/cli/check.hpp>
#include <rlock/cli/commands.hpp>
#include <rlock/cli/exit.hpp>
#include <rlock/cli/context.hpp>
#include <rlock/cli/metrics.hpp>
#include <rlock/cli/history.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/cli/table.hpp>
#include <rlock/cli/terminal.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/if_dead.hpp>
#include <rlock/lock/liveness.hpp>
#include <rlock/lock/redlock.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/lock/waiter.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/tls.hpp>
#include <rlock/redis/url.hpp>
#include <rlock/run/acquire.hpp>
#include <rlock/run/supervisor.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

extern char** environ;

namespace rlock::cli {

namespace {

// rlock's command line as it was given, before scrub_argv (cmd_run's release spec).
std::vector<std::string> g_original_args;

const char* getenv_wrapper(const char* name) {
  return std::getenv(name);
}

// One JSON document on one line (invalid UTF-8 from Redis replaced, never thrown on).
std::string json_line(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void print_json(const nlohmann::json& doc) {
  fmt::print("{}", json_line(doc));
}

// `path` made absolute (for a child that may change directory).
std::string absolute_path(const std::string& path) {
  if (path.starts_with('/')) {
    return path;
  }
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + path : path;
}

// The command line of process `pid` (its argv from /proc), as recorded:
// recorded_command_line, arguments only with `with_args`.
std::string process_command(pid_t pid, bool with_args) {
  std::string text = read_proc(pid, "cmdline", 8192);
  std::vector<std::string> argv;
  for (std::size_t at = 0; at < text.size();) {
    auto end = std::min(text.find('\0', at), text.size());
    argv.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return recorded_command_line(argv, with_args);
}

// Who takes a lock, for its record: this host (and boot), process `pid` and
// its start time, so `force-unlock --if-dead` can tell when it is gone.
lock::HolderInfo holder_info(pid_t pid, std::string command) {
  auto start = process_start(pid);
  return lock::HolderInfo{host_name(), pid, std::move(command), boot_id(),
                          start ? std::optional<long long>(start->start_ticks) : std::nullopt};
}

} // namespace

namespace {

// The terminal display while waiting: one line on stderr, rewritten in place.
class WaitDisplay {
public:
  explicit WaitDisplay(lock::Mode asked) : m_asked(asked) {}
  ~WaitDisplay() {
    if (m_shown) {
      log::write("\r\033[K");
    }
  }
  void operator()(const std::string& name, const lock::Holder& holder, Millis wait_left) {
    log::write(fmt::format("\r\033[Krlock: waiting for {} ({} to go): {}", quote(name),
                           format_duration(wait_left), holder_phrase(holder, m_asked)));
    m_shown = true;
  }

private:
  lock::Mode m_asked;
  bool m_shown = false;
};

[[noreturn]] void busy(const Context& ctx, const lock::Taken& taken) {
  const auto& inv = ctx.inv;
  const auto& name = ctx.locks[taken.busy].name;
  const auto& holder = taken.results[taken.busy].holder;
  if (inv.global.json) {
    nlohmann::json doc{{"name", name},
                       {"acquired", false},
                       {"holder", holder.owner},
                       {"type", holder_type_word(holder, inv.mode.mode)},
                       {"ttl_ms", holder.ttl.count()},
                       {"holder_info", holder_json(holder.record)}};
    if (auto held_as = held_as_word(holder, inv.mode.mode); !held_as.empty()) {
      doc["held_as"] = held_as;
    }
    print_json(doc);
  }
  std::string why =
      inv.wait ? fmt::format("still busy after waiting {}", format_duration(*inv.wait)) : std::string("busy");
  throw Error(Outcome::busy,
              fmt::format("{}{}: {}", ctx.locks.size() > 1 ? quote(name) + " " : "", why,
                          holder_phrase(holder, inv.mode.mode)));
}

// Why release or renew did nothing (`detail`: for OwnerCheck::other, `type`:
// foreign, `layout`: layout).
std::string not_held_reason(lock::OwnerCheck check, const std::string& detail, lock::KeyType type,
                            lock::Layout layout) {
  switch (check) {
  case lock::OwnerCheck::missing:
    return "not held: no such lock (it expired or was released)";
  case lock::OwnerCheck::other:
    return fmt::format("not held by this owner: held by {}", printable(detail));
  case lock::OwnerCheck::foreign:
    return fmt::format("not a lock: the key is a {}{}; left untouched", lock::key_type_name(type),
                       type == lock::KeyType::string ? " (a --limit semaphore is released with --limit N)" : "");
  case lock::OwnerCheck::layout:
    return fmt::format("not held in this mode: it is {}; {}", layout_phrase(layout, detail, false),
                       layout == lock::Layout::read        ? "give -s"
                       : layout == lock::Layout::write     ? "give --write"
                       : layout == lock::Layout::semaphore ? "give --limit N"
                                                           : "give no mode flag");
  default:
    return "";
  }
}

// The terminal display while waiting, when stderr shows it to a person.
lock::NamedBusyCallback wait_display(WaitDisplay& display) {
  bool show = isatty(STDERR_FILENO) && log::g_level != log::Level::quiet;
  return show ? lock::NamedBusyCallback(std::ref(display)) : lock::NamedBusyCallback();
}

// Takes every lock as the invocation asks (waiting, interruptible by `signals`,
// with the terminal display), or ends with the conflict exit code.
std::vector<lock::AcquireResult> acquire_or_busy(Context& ctx, const lock::AcquireRequest& request,
                                                 SignalFd& signals) {
  WaitDisplay display(ctx.inv.mode.mode);
  auto taken = lock::acquire_all(*ctx.store, request, ctx.locks, &signals, wait_display(display));
  if (!taken.acquired) {
    busy(ctx, taken);
  }
  return taken.results;
}

// The lock request of `acquire` and `run` (keys: each of ctx.locks in turn).
lock::AcquireRequest lock_request(const Context& ctx, lock::HolderInfo info) {
  const auto& inv = ctx.inv;
  lock::AcquireRequest request;
  request.keys = ctx.locks.front();
  request.mode = inv.mode;
  request.owner = inv.owner.empty() ? random_owner_token() : inv.owner;
  request.lease = inv.ttl.value_or(k_default_lease);
  request.info = std::move(info);
  request.wait = inv.wait;
  request.own_token = inv.owner.empty();
  request.sync = sync_for(inv.global, request.lease);
  return request;
}

// "a, b, c": the names, or the fences, in the order given.
template <typename Item, typename Fn>
std::string comma_list(const std::vector<Item>& items, std::string_view separator, Fn&& text) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : std::string(separator)) + text(item);
  }
  return out;
}

// One JSON object per lock, and a non-zero exit when some lock was not held by
// this owner (release, renew of several names: each is done independently).
template <typename Result>
int per_lock_outcome(const Context& ctx, const std::vector<Result>& results,
                     const std::vector<std::exception_ptr>& errors, const char* done_key,
                     const std::function<void(nlohmann::json&, const Result&)>& extra) {
  const auto& inv = ctx.inv;
  if (results.size() == 1 && errors.front()) {
    std::rethrow_exception(errors.front());
  }
  nlohmann::json docs = nlohmann::json::array();
  int failed = -1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    bool done = !errors[i] && result.check == lock::OwnerCheck::ok;
    nlohmann::json doc{{"name", ctx.locks[i].name}, {"owner", inv.owner}, {done_key, done}};
    extra(doc, result);
    if (errors[i]) {
      try {
        std::rethrow_exception(errors[i]);
      } catch (const std::exception& e) {
        doc["error"] = e.what();
      }
    }
    docs.push_back(doc);
    if (failed < 0 && !done) {
      failed = static_cast<int>(i);
    }
  }
  if (inv.global.json) {
    print_json(results.size() == 1 ? docs.front() : nlohmann::json{{"locks", docs}});
  }
  if (failed < 0) {
    return 0;
  }
  // An error reaching Redis decides the exit over "not held"; the message names the lock.
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (errors[i]) {
      try {
        std::rethrow_exception(errors[i]);
      } catch (const RedisError& e) {
        throw RedisError(e.kind(), fmt::format("{}: {}", quote(ctx.locks[i].name), e.what()));
      }
    }
  }
  const auto& result = results[failed];
  throw Error(Outcome::not_held,
              fmt::format("{}{}", results.size() > 1 ? quote(ctx.locks[failed].name) + ": " : "",
                          not_held_reason(result.check, result.detail, result.type, result.layout)));
}

int cmd_acquire(Context& ctx) {
  const auto& inv = ctx.inv;
  auto request = lock_request(ctx, holder_info(getppid(), process_command(getppid(), inv.global.record_args)));
  SignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT});
  std::vector<lock::AcquireResult> results;
  try {
    results = acquire_or_busy(ctx, request, signals);
  } catch (const RedisError& e) {
    if (redis::outcome_of(e.kind()) != redis::Outcome::unknown) {
      throw;
    }
    // The last attempt got no answer and the server may still apply it (a
    // resend of it within the latch lifetime would not count twice): say which
    // token would then hold the lock, so it can be released instead of waiting
    // for its lease.
    throw RedisError(e.kind(), request.own_token
                                   ? fmt::format("{}; the server may still apply it: release with --owner {}",
                                                 e.what(), request.owner)
                                   : fmt::format("{}; the server may still apply it (one more level for "
                                                 "--owner {}): check with rlock status",
                                                 e.what(), request.owner));
  }
  if (inv.global.json) {
    nlohmann::json docs = nlohmann::json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& result = results[i];
      nlohmann::json doc{{"name", ctx.locks[i].name},
                         {"acquired", true},
                         {"owner", request.owner},
                         {"mode", mode_word(inv.mode.mode)},
                         {"reentered", result.reentered},
                         {"count", result.count},
                         {"fence", result.fence},
                         {"ttl_ms", result.lease.count()}};
      if (inv.mode.mode == lock::Mode::limit) {
        doc["limit"] = inv.mode.limit;
      }
      if (result.replicas_acked >= 0) {
        doc["replicas_acked"] = result.replicas_acked;
      }
      if (result.validity) {
        doc["validity_ms"] = result.validity->count();
        doc["nodes"] = nodes_json(result.node_answers);
      }
      docs.push_back(doc);
    }
    print_json(results.size() == 1
                   ? docs.front()
                   : nlohmann::json{{"acquired", true}, {"owner", request.owner}, {"locks", docs}});
  } else {
    fmt::print("{}\n", request.owner);
  }
  return 0;
}

int cmd_release(Context& ctx) {
  const auto& inv = ctx.inv;
  auto released = lock::release_all(*ctx.store, ctx.locks, inv.mode.mode, inv.owner, inv.all);
  return per_lock_outcome<lock::ReleaseResult>(ctx, released.results, released.errors, "released",
                                               [](nlohmann::json& doc, const lock::ReleaseResult& result) {
                                                 doc["remaining"] = result.remaining;
                                               });
}

int cmd_renew(Context& ctx) {
  const auto& inv = ctx.inv;
  auto renewed = lock::renew_all(*ctx.store, ctx.locks, inv.mode.mode, inv.owner, inv.ttl.value_or(Millis(0)),
                                 redis::RetryPolicy::Mode::one_shot, sync_for(inv.global, inv.ttl.value_or(k_default_lease)));
  return per_lock_outcome<lock::RenewResult>(ctx, renewed.results, renewed.errors, "renewed",
                                             [](nlohmann::json& doc, const lock::RenewResult& result) {
                                               doc["ttl_ms"] = result.lease.count();
                                               if (result.replicas_acked >= 0) {
                                                 doc["replicas_acked"] = result.replicas_acked;
                                               }
                                             });
}

// status --json's "schema": raised when a field changes meaning or goes away
// (new fields keep it).
constexpr int k_status_schema = 1;

// The locks `status` shows: the named ones, or every one matching --match.
std::vector<lock::LockState> status_states(Context& ctx) {
  const auto& inv = ctx.inv;
  return inv.names.empty() ? ctx.store->find_locks(inv.match.empty() ? "*" : inv.match)
                           : ctx.store->inspect(inv.names);
}

std::string status_json_text(const Context& ctx, const std::vector<lock::LockState>& states) {
  nlohmann::json locks = nlohmann::json::array();
  for (const auto& state : states) {
    locks.push_back(status_json(state));
  }
  return json_line(
      {{"schema", k_status_schema}, {"locks", locks}, {"servers", servers_json(ctx.store->server_names())}});
}

// status --watch: a frame per interval; a server that cannot be reached is
// said in the frame and asked again at the next one.
int watch_status(Context& ctx) {
  const auto& inv = ctx.inv;
  const bool redraw = !inv.global.json && isatty(STDOUT_FILENO);
  std::string what = !inv.names.empty() ? " " + comma_list(inv.names, " ", [](const std::string& n) { return printable(n); })
                     : !inv.match.empty() ? " --match " + printable(inv.match)
                                          : std::string();
  return watch(*inv.watch, redraw, [&](const TableStyle& style) -> std::string {
    std::string body;
    try {
      auto states = status_states(ctx);
      if (inv.global.json) {
        return status_json_text(ctx, states);
      }
      body = states.empty() ? "(no locks)\n" : status_table(states, style, !inv.names.empty());
    } catch (const RedisError& e) {
      if (!lock::acquisition_unavailable(e.kind())) {
        throw;
      }
      if (inv.global.json) {
        // A document still, so a pipeline reading one per frame keeps going:
        // no locks known ("locks": null, not an empty list) and why.
        log::error("{}: {}", ctx.label, e.what());
        return json_line({{"schema", k_status_schema},
                          {"locks", nullptr},
                          {"error", fmt::format("{}: {}", ctx.label, e.what())}});
      }
      body = fmt::format("rlock: {}: {} (trying again every {})\n", ctx.label, e.what(), format_duration(*inv.watch));
    }
    std::string title = fmt::format("every {}: rlock status{} on {}    {}", format_duration(*inv.watch), what,
                                    ctx.store->describe(), utc_time(std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count()));
    return fit(title, style.width) + "\n\n" + body + (redraw ? "" : "\n");
  });
}

int cmd_status(Context& ctx) {
  const auto& inv = ctx.inv;
  if (inv.list_names) {
    // The shell completions' helper: names only, one a line (a name with a
    // newline cannot be one completion word, and is left out).
    for (const auto& state : status_states(ctx)) {
      if (state.name.find('\n') == std::string::npos) {
        fmt::print("{}\n", state.name);
      }
    }
    return 0;
  }
  if (inv.watch) {
    return watch_status(ctx);
  }
  auto states = status_states(ctx);
  if (inv.format == StatusFormat::openmetrics || inv.output) {
    auto text =
        inv.format == StatusFormat::openmetrics ? openmetrics_text(states) : status_json_text(ctx, states);
    if (inv.output) {
      write_file_atomically(*inv.output, text);
    } else {
      fmt::print("{}", text);
    }
  } else if (inv.global.json) {
    fmt::print("{}", status_json_text(ctx, states));
  } else {
    fmt::print("{}", status_table(states, stdout_style(), !inv.names.empty()));
    if (states.empty() && isatty(STDOUT_FILENO)) {
      // For people only: a script reading stdout gets nothing, as before.
      log::info("no locks found on {}{}", ctx.store->describe(),
                inv.match.empty() ? std::string() : " matching " + quote(inv.match));
    }
  }
  bool all_held = std::all_of(states.begin(), states.end(), [](const auto& state) { return state.held(); });
  return inv.names.empty() || all_held ? 0 : exit_code(Outcome::lock_free, inv.global.conflict_exit_code);
}

// force-unlock --if-dead (lock::force_unlock_if_dead decides and removes):
// what it did, said.
int force_unlock_if_dead(Context& ctx, const lock::LockState& before) {
  const auto& keys = ctx.locks.front();
  auto done = lock::force_unlock_if_dead(*ctx.store, keys, before, lock::ThisHost{host_name(), boot_id()},
                                         [](long long pid) { return process_start(static_cast<pid_t>(pid)); });
  auto verdict = done.verdict;
  if (done.outcome == lock::IfDeadOutcome::free) {
    verdict.why = "nothing to remove: the lock is free";
  }
  if (verdict.alive && before.record && before.record->acquired_at_ms) {
    verdict.why += fmt::format(", holding it since {}", utc_time(*before.record->acquired_at_ms));
  }
  if (verdict.alive && before.record && !before.record->renewed_at_ms) {
    // Never renewed: most likely a plain `acquire`, whose record names its caller.
    verdict.why += "; never renewed: a plain `acquire` records the process that ran it (a shell, a script, "
                   "a wrapper such as `timeout`), which proves that process runs, not that it still needs the lock";
  }
  if (done.outcome == lock::IfDeadOutcome::released_meanwhile) {
    verdict.why = "it was released meanwhile";
  } else if (done.outcome == lock::IfDeadOutcome::changed_hands) {
    verdict.why = "it changed hands meanwhile; nothing removed (run it again to judge the new holder)";
  }
  const bool removed = done.outcome == lock::IfDeadOutcome::removed;
  if (ctx.inv.global.json) {
    print_json(
        {{"name", keys.name}, {"removed", removed}, {"reason", verdict.why}, {"was", status_json(before)}});
  }
  if (!removed) {
    throw Error(before.held() ? Outcome::holder_alive : Outcome::nothing_removed,
                before.held() ? fmt::format("not removed: {}", verdict.why) : verdict.why);
  }
  log::info("removed {}: {}", quote(keys.name), verdict.why);
  return 0;
}

int cmd_force_unlock(Context& ctx) {
  const auto& keys = ctx.locks.front();
  auto before = ctx.store->inspect({keys.name});
  if (ctx.inv.if_dead) {
    return force_unlock_if_dead(ctx, before.front());
  }
  auto removed = ctx.store->force_unlock(keys);
  if (ctx.inv.global.json) {
    print_json({{"name", keys.name}, {"removed", removed.has_value()}, {"was", status_json(before.front())}});
  }
  if (!removed) {
    throw Error(Outcome::nothing_removed, "nothing to remove: the lock is free");
  }
  auto was = status_line(before.front());
  log::info("removed {} ({})", quote(keys.name), was.substr(0, was.find('\n'))); // Redlock: the verdict line
  return 0;
}

// doctor --json's "schema", as k_status_schema.
constexpr int k_doctor_schema = 1;

int cmd_doctor(Context& ctx) {
  std::vector<lock::Finding> findings;
  for (auto facts : ctx.store->survey()) {
    facts.replica_sync = describe_sync(ctx.inv.global);
    facts.history_enabled = ctx.inv.history.max_len > 0;
    facts.user = redis::parse_url(ctx.inv.global.urls.front()).user;
    auto more = lock::judge_server(facts);
    findings.insert(findings.end(), more.begin(), more.end());
  }
  bool unsafe = std::any_of(findings.begin(), findings.end(),
                            [](const lock::Finding& finding) { return finding.verdict == lock::Verdict::unsafe; });
  if (ctx.inv.global.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& finding : findings) {
      list.push_back(finding_json(finding));
    }
    print_json({{"schema", k_doctor_schema}, {"safe", !unsafe}, {"findings", list}});
  } else {
    fmt::print("{}", doctor_text(findings));
  }
  return unsafe ? exit_code(Outcome::unsafe_deployment, ctx.inv.global.conflict_exit_code) : 0;
}

// run --once-per, the locks just taken (run::check_once_per reads, judges and
// releases): when the job was done in the current window, says who did it
// and returns true.
bool done_in_window(Context& ctx, const run::RunSpec& spec) {
  const auto& keys = ctx.locks.front();
  auto check = run::check_once_per(*ctx.store, spec);
  if (check.verdict == lock::OnceVerdict::not_done) {
    return false;
  }
  std::string when = fmt::format("{} from {}", format_duration(*spec.once_per), utc_time(check.window.start_ms));
  if (check.verdict == lock::OnceVerdict::done) {
    log::info("{}: already done in this window ({}) {}; not running", printable(keys.name), when,
              done_phrase(*check.last_done));
  } else {
    log::warning(
        "{}: its once-per record ({}) cannot be read; taken as done in this window ({}), not running "
        "(it expires in {})",
        printable(keys.name), quote(keys.done), when, format_duration(Millis(check.last_done->ttl_ms)));
  }
  return true;
}

int cmd_history(Context& ctx) {
  const auto& keys = ctx.locks.front();
  auto history = ctx.store->history(keys, ctx.inv.history_limit);
  auto acl = lock::history_acl(redis::parse_url(ctx.inv.global.urls.front()).user, keys.log);
  if (history.access == lock::LogAccess::no_read) {
    throw Error(Outcome::denied, history_unreadable(keys.log, acl));
  }
  HistoryView view{ctx.inv.global.json, ctx.inv.utc, static_cast<int>(ctx.inv.global.urls.size())};
  fmt::print("{}", render_history(keys.name, history, view, keys.log, acl));
  return 0;
}

int cmd_run(Context& ctx) {
  const auto& inv = ctx.inv;
  run::RunSpec spec;
  std::string command = recorded_command_line(inv.child_argv, inv.global.record_args);
  spec.request = lock_request(ctx, {});
  spec.locks = ctx.locks;
  spec.child_argv = inv.child_argv;
  // CMD gets no password from rlock: the URL without it, and the password
  // file's name, so a nested `rlock run` logs in as this one did (a password
  // the user put in RLOCK_PASSWORD or REDISCLI_AUTH is passed on as it is).
  std::string urls;
  for (const auto& url : inv.global.urls) {
    urls += (urls.empty() ? "" : ",") + redis::without_password(url);
  }
  spec.child_env.emplace_back("RLOCK_URL", urls);
  if (inv.global.password_file) {
    spec.child_env.emplace_back("RLOCK_PASSWORD_FILE", absolute_path(*inv.global.password_file));
  }
  // A TLS URL is useless to CMD without its TLS settings (no secret among them:
  // the key file's name, not its content).
  if (const auto& tls = inv.global.tls) {
    for (auto [name, value] :
         {std::pair{"RLOCK_TLS_CA_FILE", tls->ca_file}, std::pair{"RLOCK_TLS_CERT", tls->cert},
          std::pair{"RLOCK_TLS_KEY", tls->key}}) {
      if (!value.empty()) {
        spec.child_env.emplace_back(name, absolute_path(value));
      }
    }
    if (!tls->server_name.empty()) {
      spec.child_env.emplace_back("RLOCK_TLS_SERVER_NAME", tls->server_name);
    }
    if (tls->insecure) {
      spec.child_env.emplace_back("RLOCK_TLS_INSECURE", "1");
    }
  }
  spec.on_lost = inv.on_lost;
  spec.kill_after = inv.kill_after;
  spec.hold_min = inv.hold_min;
  spec.max_hold = inv.max_hold;
  spec.wait_descendants = inv.wait_descendants;
  spec.once_per = inv.once_per;
  spec.label = ctx.label;
  SignalFd signals = run::make_run_signals();
  // This process holds and renews the lock: its record names it.
  spec.request.info = holder_info(getpid(), command);
  spec.request.renews = true;
  lock::configure_history(inv.history, spec.request.info);
  // Should this process be killed, CMD's guardian starts rlock again with
  // this to release the lock: the command line as given (passwords included:
  // argv is scrubbed by now) and the environment as it was.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  spec.release_spec = run::encode_release_spec(spec.request.owner, g_original_args, env);
  run::Guarded guardian = run::prepare_guardian(spec); // its exec overlaps the lock request
  run::RunAcquisition acquisition;
  {
    WaitDisplay display(inv.mode.mode); // cleared before CMD starts
    acquisition = run::acquire_for_run(*ctx.store, spec, inv.if_unavailable, &signals, wait_display(display));
  }
  switch (acquisition.kind) {
  case run::RunAcquisition::Kind::busy:
    busy(ctx, acquisition.taken);
  case run::RunAcquisition::Kind::skip:
    log::warning("{}: {}; not running CMD (--if-unavailable skip)", ctx.label, acquisition.unavailable->what());
    run::log_skipped(*ctx.store, spec, "unavailable");
    return 0;
  case run::RunAcquisition::Kind::run_unlocked:
    // Loud: shown even with -q, like what `run` does to CMD.
    log::error("warning: {}: {}; RUNNING CMD WITHOUT THE LOCK (--if-unavailable run): RLOCK_UNLOCKED=1, "
               "RLOCK_FENCE empty",
               ctx.label, acquisition.unavailable->what());
    return run::supervise_unlocked(spec, signals, guardian);
  case run::RunAcquisition::Kind::acquired:
    break;
  }
  if (inv.once_per && done_in_window(ctx, spec)) {
    run::log_skipped(*ctx.store, spec, "done in window");
    return 0;
  }
  return run::supervise(*ctx.store, spec, acquisition.taken.results, signals, guardian);
}

} // namespace

namespace {
constexpr Subcommand k_subcommands[] = {
    {.name = "acquire",
     .summary = "Take a lock (or re-enter it) and print the owner token",
     .handler = cmd_acquire,
     .takes_lock_names = true,
     .writes_leases = true},
    {.name = "release",
     .summary = "Release one level of a lock (or all with --all)",
     .handler = cmd_release,
     .needs_owner = true,
     .takes_lock_names = true},
    {.name = "renew",
     .summary = "Extend the lease of a lock you hold",
     .handler = cmd_renew,
     .needs_owner = true,
     .takes_lock_names = true,
     .writes_leases = true},
    {.name = "status", .summary = "Show who holds locks, since when and for how long", .handler = cmd_status},
    {.name = "force-unlock",
     .summary = "Remove a lock whoever holds it (clears a dead holder)",
     .handler = cmd_force_unlock,
     .takes_lock_names = true},
    {.name = "run",
     .summary = "Hold a lock while a command runs: acquire, renew, release",
     .handler = cmd_run,
     .takes_command = true,
     .takes_lock_names = true,
     .writes_leases = true},
    {.name = "history",
     .summary = "Show a lock's past: who held it, for how long, how it ended",
     .handler = cmd_history,
     .takes_lock_names = true},
    {.name = "doctor",
     .summary = "Check what threatens lock safety on the server(s): eviction, persistence...",
     .handler = cmd_doctor},
    {.name = "check",
     .summary = "Monitoring plugin (Nagios, Icinga...): stuck locks, dead holders, missed once-per jobs",
     .handler = cmd_check},
};
} // namespace

std::span<const Subcommand> subcommands() {
  return k_subcommands;
}

const Subcommand* find_subcommand(std::string_view name) {
  for (const auto& sub : k_subcommands) {
    if (sub.name == name) {
      return &sub;
    }
  }
  return nullptr;
}

std::string subcommand_names() {
  std::string out;
  for (const auto& sub : k_subcommands) {
    out += (out.empty() ? "" : ", ") + std::string(sub.name);
  }
  return out;
}

namespace {

// What every handler works with: the store (nothing connected yet), each
// name's keys, and `context` for error lines.
Context make_context(const Invocation& inv, std::string& context) {
  auto endpoints = resolve_endpoints(inv.global);
  if (const auto& tls = inv.global.tls) {
    for (auto& endpoint : endpoints) {
      if (endpoint.tls) {
        endpoint.tls = *tls;
      }
    }
    redis::tls_context(*tls); // loads the files now: a bad one is a usage error before anything is sent
    if (tls->insecure) {
      log::warning("--tls-insecure: the server's certificate is not verified");
    }
  }
  // The default replica sync needs each primary's replica count: INFO replication with the
  // handshake (same round trip), only for the commands that acquire or renew.
  const bool syncs = inv.sub->writes_leases;
  for (auto& endpoint : endpoints) {
    endpoint.learn_replicas = syncs && inv.global.sync_replicas.automatic;
  }
  if (const auto sync = describe_sync(inv.global); sync.empty()) {
    log::debug("replica sync: off ({}=0): acquire and renew do not wait for replicas", inv.global.sync_source);
  } else {
    log::debug("replica sync: {}", sync);
  }
  redis::Timeouts timeouts{inv.global.connect_timeout, inv.global.io_timeout};
  if (endpoints.size() > 1) {
    timeouts = lock::per_node_timeouts(timeouts, inv.ttl.value_or(k_default_lease)); // Redlock
  }
  auto store = lock::make_store(endpoints, timeouts);
  std::vector<lock::LockKeys> locks;
  if (inv.sub->takes_lock_names) {
    for (const auto& name : inv.names) {
      locks.push_back(lock::keys_for(name));
    }
  }
  context = inv.names.empty() ? fmt::format("{} on {}", inv.sub->name, store->describe())
                              : fmt::format("{} {} on {}", inv.sub->name,
                                            comma_list(inv.names, ", ", [](const std::string& name) { return quote(name); }),
                                            store->describe());
  return Context{inv, std::move(store), std::move(locks), context};
}

} // namespace

int execute(const Invocation& inv, std::string& context) {
  Context ctx = make_context(inv, context);
  if (!inv.sub->takes_command) { // run names itself (cmd_run)
    lock::configure_history(inv.history, holder_info(getppid(), process_command(getppid(), inv.global.record_args)));
  }
  return inv.sub->handler(ctx);
}

namespace {

// At exit, how long to wait for messages a blocked stderr has not taken yet.
constexpr Millis k_final_flush{1000};

int main_unflushed(int argc, char** argv) {
  std::string context;
  int conflict_exit_code = k_default_conflict_exit_code; // -E's, once parsed
  // check is a monitoring plugin: every error is UNKNOWN (3), one line on
  // stdout (argv is read again only on the way out, so no other command pays).
  auto plugin = [&] { return is_check(subcommand_in(argc, argv)); };
  try {
    auto parsed = parse(argc, argv, getenv_wrapper);
    g_original_args.assign(argv, argv + argc); // for run's release after its death (cmd_run)
    scrub_argv(argc, argv); // parsed: the password is in rlock's memory now
    if (!parsed.invocation) {
      fmt::print("{}", parsed.output);
      return parsed.exit_code;
    }
    log::g_level = parsed.invocation->global.level;
    conflict_exit_code = parsed.invocation->global.conflict_exit_code;
    for (const auto& warning : parsed.invocation->warnings) {
      log::warning("{}", warning);
    }
    if (parsed.invocation->global.password_in_argv) {
      // As redis-cli -a warns (its --no-auth-warning is our -q): scrubbing argv
      // after start does not cover shell history, audit logs or the moment
      // before the scrub.
      log::warning("Using a password with '-u' on the command line may not be safe; use --password-file "
                   "or RLOCK_PASSWORD (-q silences this)");
    }
    return execute(*parsed.invocation, context);
  } catch (const Error& e) {
    if (plugin()) {
      return check_unknown(context, e.what());
    }
    std::fflush(stdout);
    if (context.empty()) {
      log::error("{}", e.what());
    } else {
      log::error("{}: {}", context, e.what());
    }
    return exit_code(e, conflict_exit_code);
  } catch (const std::exception& e) {
    if (plugin()) {
      return check_unknown(context, fmt::format("internal error: {}", e.what()));
    }
    log::error("{}{}internal error: {}", context, context.empty() ? "" : ": ", e.what());
    return exit_code(Outcome::failed, conflict_exit_code);
  }
}

// `rlock run` was killed: its guardian executed rlock again, which has
// killed CMD's tree by now (run::resume_orphaned). Releases the locks the run
// held, parsing its command line and environment as it did, with one
// owner-checked try; says what happened.
int release_orphaned(const run::Orphaned& orphaned) {
  const std::string what = orphaned.killed ? "CMD's tree was stopped (SIGKILL)"
                                           : "--on-lost ignore: CMD goes on unprotected";
  if (!orphaned.spec) {
    log::error("rlock run (pid {}) was killed; {}", orphaned.run_pid, what);
    return 0;
  }
  const auto& spec = *orphaned.spec;
  std::string context = "run";
  try {
    ::clearenv();
    for (const auto& entry : spec.env) {
      auto eq = entry.find('=');
      if (eq != std::string::npos && eq > 0) {
        ::setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
      }
    }
    std::vector<std::string> args = spec.args;
    std::vector<char*> argv;
    for (auto& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    auto parsed = parse(static_cast<int>(args.size()), argv.data(), getenv_wrapper);
    if (!parsed.invocation) {
      throw Error(Outcome::failed, "its command line no longer parses");
    }
    const auto& inv = *parsed.invocation;
    log::g_level = inv.global.level;
    Context ctx = make_context(inv, context);
    lock::configure_history(inv.history, holder_info(getpid(), "rlock run (released after rlock was killed)"));
    auto released = lock::release_all(*ctx.store, ctx.locks, inv.mode.mode, spec.owner, false,
                                      redis::RetryPolicy::Mode::one_shot);
    log::error("{}: rlock (pid {}) was killed; {}; lock released", context, orphaned.run_pid, what);
    lock::warn_unreleased(context, ctx.locks, released);
  } catch (const std::exception& e) {
    log::error("{}: rlock (pid {}) was killed; {}; the lock could not be released ({}): it expires by its lease",
               context, orphaned.run_pid, what, e.what());
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (auto status = run::guardian_entry(argc, argv)) {
    return *status; // rlock's own image as `run`'s guardian (the small one could not be executed)
  }
  if (auto orphaned = run::resume_orphaned()) {
    int status = release_orphaned(*orphaned);
    log::flush(k_final_flush);
    return status;
  }
  int status = main_unflushed(argc, argv);
  log::flush(k_final_flush);
  return status;
}

} // namespace rlock::cli
