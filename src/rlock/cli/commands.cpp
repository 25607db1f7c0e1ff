#include <rlock/cli/commands.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/cli/table.hpp>
#include <rlock/cli/terminal.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/liveness.hpp>
#include <rlock/lock/redlock.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/lock/waiter.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/tls.hpp>
#include <rlock/redis/url.hpp>
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

namespace rlock::cli {

namespace {

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

// The command line of process `pid`, NULs as spaces, for the holder record.
std::string process_command(pid_t pid) {
  std::string text = read_proc(pid, "cmdline", 8192);
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  for (auto& c : text) {
    c = c == '\0' ? ' ' : c;
  }
  text = redact_command_line(text);
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

// Who takes a lock, for its record: this host (and boot), process `pid` and
// its start time, so `force-unlock --if-dead` can tell when it is gone.
lock::HolderInfo holder_info(pid_t pid, std::string command) {
  auto start = process_start(pid);
  return lock::HolderInfo{host_name(), pid, std::move(command), boot_id(),
                          start ? std::optional<long long>(start->start_ticks) : std::nullopt};
}

} // namespace

struct Context {
  const Invocation& inv;
  std::unique_ptr<lock::Store> store;
  std::vector<lock::LockKeys> locks; // of each name (acquire, release, renew, force-unlock, run)
  std::string label;                 // "run \"NAME\" on URL", for messages
};

namespace {

constexpr Millis k_default_ttl{30'000};

// The terminal display while waiting: one line on stderr, rewritten in place.
class WaitDisplay {
public:
  ~WaitDisplay() {
    if (m_shown) {
      log::write("\r\033[K");
    }
  }
  void operator()(const std::string& name, const lock::Holder& holder, Millis wait_left) {
    log::write(fmt::format("\r\033[Krlock: waiting for {} ({} to go): {}", quote(name),
                           format_duration(wait_left), holder_phrase(holder)));
    m_shown = true;
  }

private:
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
                       {"type", holder.type},
                       {"ttl_ms", holder.ttl.count()},
                       {"holder_info", holder_json(holder.record)}};
    if (!holder.mode.empty()) {
      doc["held_as"] = holder.mode;
    }
    print_json(doc);
  }
  std::string why =
      inv.wait ? fmt::format("still busy after waiting {}", format_duration(*inv.wait)) : std::string("busy");
  throw Error(static_cast<ExitCode>(inv.global.conflict_exit_code),
              fmt::format("{}{}: {}", ctx.locks.size() > 1 ? quote(name) + " " : "", why, holder_phrase(holder)));
}

std::string not_held_reason(lock::OwnerCheck check, const std::string& detail) {
  switch (check) {
  case lock::OwnerCheck::missing:
    return "not held: no such lock (it expired or was released)";
  case lock::OwnerCheck::other:
    return fmt::format("not held by this owner: held by {}", printable(detail));
  case lock::OwnerCheck::foreign:
    return fmt::format("not a lock: the key is a {}{}; left untouched", detail,
                       detail == "string" ? " (a --limit semaphore is released with --limit N)" : "");
  case lock::OwnerCheck::layout:
    return fmt::format("not held in this mode: it is {}; {}", layout_phrase(detail),
                       detail == "read"        ? "give -s"
                       : detail == "write"     ? "give --write"
                       : detail == "semaphore" ? "give --limit N"
                                               : "give no mode flag");
  default:
    return "";
  }
}

// Takes every lock as the invocation asks (waiting, interruptible by `signals`,
// with the terminal display), or ends with the conflict exit code.
std::vector<lock::AcquireResult> acquire_or_busy(Context& ctx, const lock::AcquireRequest& request,
                                                 SignalFd& signals) {
  bool show = isatty(STDERR_FILENO) && log::g_level != log::Level::quiet;
  WaitDisplay display;
  auto taken = lock::acquire_all(*ctx.store, request, ctx.locks, &signals,
                                 show ? lock::NamedBusyCallback(std::ref(display)) : lock::NamedBusyCallback());
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
  request.lease = inv.ttl.value_or(k_default_ttl);
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
  throw Error(ExitCode::not_held,
              fmt::format("{}{}", results.size() > 1 ? quote(ctx.locks[failed].name) + ": " : "",
                          not_held_reason(result.check, result.detail)));
}

int cmd_acquire(Context& ctx) {
  const auto& inv = ctx.inv;
  auto request = lock_request(ctx, holder_info(getppid(), process_command(getppid())));
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
                         {"mode", lock::mode_name(inv.mode.mode)},
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
  std::vector<lock::RenewResult> results(ctx.locks.size());
  std::vector<std::exception_ptr> errors(ctx.locks.size());
  for (std::size_t i = 0; i < ctx.locks.size(); ++i) {
    try {
      results[i] = ctx.store->renew(ctx.locks[i], inv.mode.mode, inv.owner, inv.ttl.value_or(Millis(0)),
                                    redis::RetryPolicy::Mode::one_shot,
                                    sync_for(inv.global, inv.ttl.value_or(k_default_ttl)));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  return per_lock_outcome<lock::RenewResult>(ctx, results, errors, "renewed",
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

std::string status_json_text(const std::vector<lock::LockState>& states) {
  nlohmann::json locks = nlohmann::json::array();
  for (const auto& state : states) {
    locks.push_back(status_json(state));
  }
  return json_line({{"schema", k_status_schema}, {"locks", locks}});
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
        return status_json_text(states);
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
  if (inv.global.json) {
    fmt::print("{}", status_json_text(states));
  } else {
    fmt::print("{}", status_table(states, stdout_style(), !inv.names.empty()));
    if (states.empty() && isatty(STDOUT_FILENO)) {
      // For people only: a script reading stdout gets nothing, as before.
      log::info("no locks found on {}{}", ctx.store->describe(),
                inv.match.empty() ? std::string() : " matching " + quote(inv.match));
    }
  }
  bool all_held = std::all_of(states.begin(), states.end(), [](const auto& state) { return state.held(); });
  return inv.names.empty() || all_held ? 0 : static_cast<int>(ExitCode::not_held);
}

// force-unlock --if-dead: judge the holder from its record, then remove the
// lock only if it is still the hold that was judged (one script).
int force_unlock_if_dead(Context& ctx, const lock::LockState& before) {
  const auto& keys = ctx.locks.front();
  lock::HolderVerdict verdict{false, false, "nothing to remove: the lock is free"};
  if (before.held()) {
    verdict = lock::judge_holder(before, lock::ThisHost{host_name(), boot_id()},
                                 [](long long pid) { return process_start(static_cast<pid_t>(pid)); });
  }
  if (verdict.alive && before.record && before.record->acquired_at_ms) {
    verdict.why += fmt::format(", holding it since {}", utc_time(*before.record->acquired_at_ms));
  }
  if (verdict.alive && before.record && !before.record->renewed_at_ms) {
    // Never renewed: most likely a plain `acquire`, whose record names its caller.
    verdict.why += "; never renewed: a plain `acquire` records the process that ran it (a shell, a script, "
                   "a wrapper such as `timeout`), which proves that process runs, not that it still needs the lock";
  }
  auto outcome = lock::ConditionalRemoval::changed;
  if (verdict.gone) {
    outcome = ctx.store->force_unlock_if(keys, {before.owners.front().first, before.record_raw});
    if (outcome == lock::ConditionalRemoval::gone) {
      verdict.why = "it was released meanwhile";
    } else if (outcome == lock::ConditionalRemoval::changed) {
      verdict.why = "it changed hands meanwhile; nothing removed (run it again to judge the new holder)";
    }
  }
  const bool removed = outcome == lock::ConditionalRemoval::removed;
  if (ctx.inv.global.json) {
    print_json(
        {{"name", keys.name}, {"removed", removed}, {"reason", verdict.why}, {"was", status_json(before)}});
  }
  if (!removed) {
    throw Error(ExitCode::not_held,
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
    throw Error(ExitCode::not_held, "nothing to remove: the lock is free");
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
    auto more = lock::judge_server(facts);
    findings.insert(findings.end(), more.begin(), more.end());
  }
  bool unsafe = std::any_of(findings.begin(), findings.end(),
                            [](const lock::Finding& finding) { return finding.verdict == "unsafe"; });
  if (ctx.inv.global.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& finding : findings) {
      list.push_back(finding_json(finding));
    }
    print_json({{"schema", k_doctor_schema}, {"safe", !unsafe}, {"findings", list}});
  } else {
    fmt::print("{}", doctor_text(findings));
  }
  return unsafe ? static_cast<int>(ExitCode::not_held) : 0;
}

// run --once-per, the lock just taken: when the job was done in the current
// window (read while holding the lock, so no run can record meanwhile), says
// who did it, releases and returns true.
bool done_in_window(Context& ctx, const run::RunSpec& spec) {
  const auto& inv = ctx.inv;
  const auto& keys = ctx.locks.front();
  auto release = [&] {
    auto released = lock::release_all(*ctx.store, ctx.locks, inv.mode.mode, spec.request.owner, false);
    if (released.errors.front()) {
      try {
        std::rethrow_exception(released.errors.front());
      } catch (const std::exception& e) {
        log::warning("{}: could not release {} (it expires by its lease): {}", ctx.label, quote(keys.name),
                     e.what());
      }
    }
  };
  lock::LockState state;
  try {
    state = ctx.store->inspect({keys.name}).front();
  } catch (...) {
    release();
    throw;
  }
  const long long length = inv.once_per->count();
  if (!state.server_now_ms) {
    release();
    throw Error(ExitCode::software, "the server's answer to the once-per check has no time in it");
  }
  const long long now_ms = *state.server_now_ms;
  auto verdict = lock::judge_once(state.last_done, now_ms, length);
  if (verdict == lock::OnceVerdict::not_done) {
    return false;
  }
  release();
  auto window = lock::window_of(now_ms, length);
  std::string when = fmt::format("{} from {}", format_duration(*inv.once_per), utc_time(window.start_ms));
  if (verdict == lock::OnceVerdict::done) {
    log::info("{}: already done in this window ({}) {}; not running", printable(keys.name), when,
              done_phrase(*state.last_done));
  } else {
    log::warning(
        "{}: its once-per record ({}) cannot be read; taken as done in this window ({}), not running "
        "(it expires in {})",
        printable(keys.name), quote(keys.done), when, format_duration(Millis(state.last_done->ttl_ms)));
  }
  return true;
}

int cmd_run(Context& ctx) {
  const auto& inv = ctx.inv;
  run::RunSpec spec;
  std::string command;
  for (const auto& arg : inv.child_argv) {
    command += (command.empty() ? "" : " ") + arg;
  }
  command = redact_command_line(command);
  if (command.size() > 200) {
    command = command.substr(0, 200) + "...";
  }
  spec.request = lock_request(ctx, holder_info(getpid(), command));
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
  run::Guardian guardian(spec.on_lost != run::OnLost::ignore);
  if (!guardian.fork_supervisor()) {
    return guardian.watch(signals, spec.label); // the caller's rlock: passes signals on, waits
  }
  // In the supervisor: it holds and renews the lock, so its record names it.
  spec.request.info = holder_info(getpid(), command);
  spec.request.renews = true;
  std::vector<lock::AcquireResult> acquired;
  try {
    acquired = acquire_or_busy(ctx, spec.request, signals);
  } catch (const RedisError& e) {
    // --if-unavailable: decided from what happened, the error's kind
    // (lock::acquisition_unavailable), never from an exit code: busy is an
    // Error of its own whose code -E may set to 69; auth and usage errors
    // never qualify either.
    if (!lock::acquisition_unavailable(e.kind()) || inv.if_unavailable == IfUnavailable::fail) {
      throw;
    }
    if (inv.if_unavailable == IfUnavailable::skip) {
      log::warning("{}: {}; not running CMD (--if-unavailable skip)", ctx.label, e.what());
      return 0;
    }
    // Loud: shown even with -q, like what `run` does to CMD.
    log::error("warning: {}: {}; RUNNING CMD WITHOUT THE LOCK (--if-unavailable run): RLOCK_UNLOCKED=1, "
               "RLOCK_FENCE empty",
               ctx.label, e.what());
    return run::supervise_unlocked(spec, signals);
  }
  if (inv.once_per && done_in_window(ctx, spec)) {
    return 0;
  }
  return run::supervise(*ctx.store, spec, acquired, signals);
}

} // namespace

namespace {
constexpr Subcommand k_subcommands[] = {
    {"acquire", "Take a lock (or re-enter it) and print the owner token", cmd_acquire, false, false},
    {"release", "Release one level of a lock (or all with --all)", cmd_release, true, false},
    {"renew", "Extend the lease of a lock you hold", cmd_renew, true, false},
    {"status", "Show who holds locks, since when and for how long", cmd_status, false, false},
    {"force-unlock", "Remove a lock whoever holds it (clears a dead holder)", cmd_force_unlock, false, false},
    {"run", "Hold a lock while a command runs: acquire, renew, release", cmd_run, false, true},
    {"doctor", "Check what threatens lock safety on the server(s): eviction, persistence...", cmd_doctor,
     false, false},
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

int execute(const Invocation& inv, std::string& context) {
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
  const bool syncs = inv.sub->name == "acquire" || inv.sub->name == "run" || inv.sub->name == "renew";
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
    timeouts = lock::per_node_timeouts(timeouts, inv.ttl.value_or(k_default_ttl)); // Redlock
  }
  auto store = lock::make_store(endpoints, timeouts);
  std::vector<lock::LockKeys> locks;
  if (inv.sub->name != "status") {
    for (const auto& name : inv.names) {
      locks.push_back(lock::keys_for(name));
    }
  }
  context = inv.names.empty() ? fmt::format("{} on {}", inv.sub->name, store->describe())
                              : fmt::format("{} {} on {}", inv.sub->name,
                                            comma_list(inv.names, ", ", [](const std::string& name) { return quote(name); }),
                                            store->describe());
  Context ctx{inv, std::move(store), std::move(locks), context};
  return inv.sub->handler(ctx);
}

namespace {

// At exit, how long to wait for messages a blocked stderr has not taken yet.
constexpr Millis k_final_flush{1000};

int main_unflushed(int argc, char** argv) {
  std::string context;
  try {
    auto parsed = parse(argc, argv, getenv_wrapper);
    scrub_argv(argc, argv); // parsed: the password is in rlock's memory now
    if (!parsed.invocation) {
      fmt::print("{}", parsed.output);
      return parsed.exit_code;
    }
    log::g_level = parsed.invocation->global.level;
    if (parsed.invocation->global.password_in_argv) {
      // As redis-cli -a warns (its --no-auth-warning is our -q): scrubbing argv
      // after start does not cover shell history, audit logs or the moment
      // before the scrub.
      log::warning("Using a password with '-u' on the command line may not be safe; use --password-file "
                   "or RLOCK_PASSWORD (-q silences this)");
    }
    return execute(*parsed.invocation, context);
  } catch (const Error& e) {
    std::fflush(stdout);
    if (context.empty()) {
      log::error("{}", e.what());
    } else {
      log::error("{}: {}", context, e.what());
    }
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    log::error("{}{}internal error: {}", context, context.empty() ? "" : ": ", e.what());
    return static_cast<int>(ExitCode::software);
  }
}

} // namespace

int main(int argc, char** argv) {
  int status = main_unflushed(argc, argv);
  log::flush(k_final_flush);
  return status;
}

} // namespace rlock::cli
