// `rlock run NAME... -- CMD`: its row, flags, their conversion, and the
// handler up to the supervisor (CMD's environment, --once-per, --if-unavailable).

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/cmd_run.hpp>
#include <rlock/cli/commands.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/redis/url.hpp>
#include <rlock/run/acquire.hpp>
#include <rlock/run/supervisor.hpp>

#include <fmt/format.h>

#include <unistd.h>

extern char** environ;

namespace rlock::cli {

namespace {

// The shortest lease `run` accepts: renewals every TTL/3 must fit round trips
// and scheduling delays with room to spare.
constexpr Millis k_min_run_ttl{500};

// What CLI11 fills in run's own flags.
struct RunFlags {
  std::string on_lost; // "": the default
  std::string kill_after = format_duration(k_default_kill_after);
  std::string hold_min;
  std::string max_hold;
  bool wait_descendants = false;
  std::string once_per;
  std::string if_unavailable; // "": the default
};

// What `given` means in `words` (CLI11 let only its words through); "": the first's.
template <class Value, std::size_t N>
Value meaning(const std::pair<std::string_view, Value> (&words)[N], const std::string& given) {
  for (const auto& [word, value] : words) {
    if (given == word) {
      return value;
    }
  }
  return words[0].second;
}

// The words, for CLI11's check.
template <class Value, std::size_t N>
std::vector<std::string> words_of(const std::pair<std::string_view, Value> (&words)[N]) {
  std::vector<std::string> out;
  for (const auto& [word, value] : words) {
    out.emplace_back(word);
  }
  return out;
}

// run's own options, and what it refuses.
RunOptions convert_run(const RunFlags& raw, const Invocation& inv) {
  RunOptions opts;
  if (inv.child_argv.empty()) {
    throw UsageError("run: no command given (rlock run NAME -- CMD [ARG...])");
  }
  opts.on_lost = meaning(k_on_lost_words, raw.on_lost);
  opts.kill_after = parse_duration(raw.kill_after, "--kill-after");
  opts.hold_min = optional_duration(raw.hold_min, "--hold-min");
  opts.max_hold = optional_duration(raw.max_hold, "--max-hold");
  opts.wait_descendants = raw.wait_descendants;
  opts.once_per = optional_duration(raw.once_per, "--once-per");
  if (opts.once_per) {
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
      throw UsageError(
          fmt::format("--once-per with --{}: a once-per-window job needs a plain or --fair lock; {}",
                      mode_word(mode), why));
    }
    if (inv.global.urls.size() > 1) {
      throw UsageError("--once-per takes one URL: a Redlock over several masters has no one place for the "
                       "record of a done job");
    }
  }
  opts.if_unavailable = meaning(k_if_unavailable_words, raw.if_unavailable);
  if (opts.max_hold && opts.hold_min && *opts.hold_min > *opts.max_hold) {
    throw UsageError("run: --hold-min is longer than --max-hold");
  }
  if (inv.ttl && *inv.ttl < k_min_run_ttl) {
    throw UsageError(
        fmt::format("--ttl: {} is too short for run: a lease under {} cannot be renewed reliably",
                    format_duration(*inv.ttl), format_duration(k_min_run_ttl)));
  }
  return opts;
}

Convert run_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<RunFlags>();
  add_names(sub, shared, "Lock name; several: all or none", true);
  add_ttl(sub, shared, "Lease, renewed every TTL/3 while CMD runs " + default_of(k_default_lease));
  add_wait_flags(sub, shared);
  add_mode_flags(sub, shared);
  sub.add_option("--on-lost", raw->on_lost,
                 fmt::format("When the lock is lost: term (SIGTERM, then SIGKILL), kill, or ignore (default {})",
                             k_on_lost_words[0].first))
      ->type_name("POLICY")
      ->check(CLI::IsMember(words_of(k_on_lost_words)));
  sub.add_option("--kill-after", raw->kill_after,
                 "SIGKILL this long after SIGTERM when stopping CMD " + default_of(k_default_kill_after))
      ->type_name("DUR");
  sub.add_option("--hold-min", raw->hold_min,
                 "Keep the lock until DUR after acquisition even if CMD ends sooner")
      ->type_name("DUR");
  sub.add_option("--max-hold", raw->max_hold, "Stop CMD as for a lost lock after holding DUR")
      ->type_name("DUR");
  sub.add_flag("--wait-descendants", raw->wait_descendants,
               "When CMD exits, keep the lock until what it left running ends (default: stop them)");
  sub.add_option("--once-per", raw->once_per,
                 "Run CMD at most once per DUR-long window (windows since the Unix epoch on the Redis "
                 "server's clock: 1d = a UTC day): after CMD exits 0 the window is recorded as done; a "
                 "later run of NAME in it, on any host, runs nothing and exits 0")
      ->type_name("DUR");
  sub.add_option("--if-unavailable", raw->if_unavailable,
                 fmt::format("When Redis cannot be reached to take the lock: fail (exit 69), skip (run nothing, "
                             "exit 0) or run (CMD without a lock, RLOCK_UNLOCKED=1) (default {})",
                             k_if_unavailable_words[0].first))
      ->type_name("WHAT")
      ->check(CLI::IsMember(words_of(k_if_unavailable_words)));
  sub.footer(
      std::string("Then: -- CMD [ARG...]  the command to run under the lock (searched in PATH),\n"
                  "with RLOCK_NAME, RLOCK_OWNER, RLOCK_FENCE and RLOCK_URL in its environment\n"
                  "(several NAMEs: RLOCK_NAME and RLOCK_FENCE list them, comma-separated;\n"
                  "a TLS URL: RLOCK_TLS_* too; run without a lock by --if-unavailable run:\n"
                  "RLOCK_OWNER and RLOCK_FENCE empty, RLOCK_UNLOCKED=1).\n"
                  "rlock exits with CMD's status. A NAME that starts with '-': run -- -NAME -- CMD.\n\n"));
  return [raw](Invocation& inv, Env) { inv.own = convert_run(*raw, inv); };
}

// `path` made absolute (for a child that may change directory).
std::string absolute_path(const std::string& path) {
  if (path.starts_with('/')) {
    return path;
  }
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + path : path;
}

// run --once-per, the locks just taken (run::check_once_per reads, judges and
// releases): when the job was done in the current window, says who did it
// (with -v only: a skip is success, and cron mails every output, issue 43)
// and returns true.
bool done_in_window(Context& ctx, const run::RunSpec& spec) {
  const auto& keys = ctx.locks.front();
  auto check = run::check_once_per(*ctx.store, spec);
  if (check.verdict == lock::OnceVerdict::not_done) {
    return false;
  }
  std::string when =
      fmt::format("{} from {}", format_duration(*spec.once_per), utc_time(check.window.start_ms));
  if (check.verdict == lock::OnceVerdict::done) {
    log::debug("{}: already done in this window ({}) {}; not running", printable(keys.name), when,
               done_phrase(*check.last_done));
  } else {
    log::warning(
        "{}: its once-per record ({}) cannot be read; taken as done in this window ({}), not running "
        "(it expires in {})",
        printable(keys.name), quote(keys.done), when, format_duration(Millis(check.last_done->ttl_ms)));
  }
  return true;
}

int cmd_run(Context& ctx) {
  const auto& inv = ctx.inv;
  const auto& own = inv.own_as<RunOptions>();
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
  spec.on_lost = own.on_lost;
  spec.kill_after = own.kill_after;
  spec.hold_min = own.hold_min;
  spec.max_hold = own.max_hold;
  spec.wait_descendants = own.wait_descendants;
  spec.once_per = own.once_per;
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
  spec.release_spec = run::encode_release_spec(spec.request.owner, command_line_as_given(), env);
  run::Guarded guardian = run::prepare_guardian(spec); // its exec overlaps the lock request
  run::RunAcquisition acquisition;
  {
    WaitDisplay display(inv.mode.mode); // cleared before CMD starts
    acquisition = run::acquire_for_run(*ctx.store, spec, own.if_unavailable, &signals, wait_display(display));
  }
  switch (acquisition.kind) {
  case run::RunAcquisition::Kind::busy:
    busy(ctx, acquisition.taken);
  case run::RunAcquisition::Kind::skip:
    log::warning("{}: {}; not running CMD (--if-unavailable skip)", ctx.label,
                 acquisition.unavailable->what());
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
  if (own.once_per && done_in_window(ctx, spec)) {
    run::log_skipped(*ctx.store, spec, "done in window");
    return 0;
  }
  return run::supervise(*ctx.store, spec, acquisition.taken.results, signals, guardian);
}

} // namespace

extern const Subcommand k_run_command;
constexpr Subcommand k_run_command{
    .name = "run",
    .summary = "Hold a lock while a command runs: acquire, renew, release",
    .flags = run_flags,
    .handler = cmd_run,
    .takes_command = true,
    .takes_lock_names = true,
    .writes_leases = true,
    .exits =
        "CMD's own status; {usage} usage, {unavailable} Redis unavailable (--if-unavailable skip: 0), "
        "{software} internal, {busy} busy or the wait ran out (-E), {lost} the lock was lost (or --max-hold "
        "passed) and CMD was stopped, {denied} auth denied, {cannot_execute} CMD not executable, "
        "{not_found} CMD not found, 128+N CMD killed by signal N (130, 143: interrupted while waiting)"};

} // namespace rlock::cli
