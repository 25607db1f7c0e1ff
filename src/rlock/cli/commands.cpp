// Dispatch: cli::main (parse, execute the row's handler, one line and an exit
// status for every error), the store and keys a handler gets (make_context),
// and the release a killed `rlock run`'s guardian asks for (release_orphaned).

#include <rlock/cli/commands.hpp>
#include <rlock/cli/context.hpp>
#include <rlock/cli/exit.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/redlock.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/tls.hpp>
#include <rlock/run/spawn.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace rlock::cli {

namespace {

// rlock's command line as it was given, before scrub_argv (run's release spec).
std::vector<std::string> g_original_args;

const char* getenv_wrapper(const char* name) {
  return std::getenv(name);
}

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

const std::vector<std::string>& command_line_as_given() {
  return g_original_args;
}

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
  // A row may say its errors its own way (check, a monitoring plugin: UNKNOWN
  // on stdout); argv is read again only on the way out, so no other command pays.
  auto on_error = [&]() -> int (*)(const std::string&, const std::string&) {
    const auto* sub = subcommand_in(argc, argv);
    return sub != nullptr ? sub->on_error : nullptr;
  };
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
    if (auto say = on_error()) {
      return say(context, e.what());
    }
    std::fflush(stdout);
    if (context.empty()) {
      log::error("{}", e.what());
    } else {
      log::error("{}: {}", context, e.what());
    }
    return exit_code(e, conflict_exit_code);
  } catch (const std::exception& e) {
    if (auto say = on_error()) {
      return say(context, fmt::format("internal error: {}", e.what()));
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
    if (orphaned.waiting) {
      return 0; // nothing started, nothing to leave
    }
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
    if (orphaned.waiting) {
      // Nothing was started; whatever it may have taken before its go expires
      // by its lease (a release here could end a level an outer run with the
      // same owner holds). Its place in the queue is given up at once.
      for (const auto& keys : ctx.locks) {
        ctx.store->leave_queue(keys, inv.mode.mode, spec.owner);
      }
      log::debug("{}: rlock (pid {}) was killed before it started CMD; it left the queue", context,
                 orphaned.run_pid);
      return 0;
    }
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
