// `rlock run` once the locks are held: CMD's environment, its start, the loop
// that feeds facts to the plan and carries out each turn, the release.

#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/lock/waiter.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/stopping.hpp>
#include <rlock/run/supervisor.hpp>
#include <rlock/run/tree.hpp>
#include <rlock/run/watchdog.hpp>

#include <fmt/format.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <optional>

namespace rlock::run {

namespace {

// Releases our level of every lock; never throws (the child's status matters more).
// `within`: after a lost lease, one try of each release, never resent, all of
// it within this long (StopPlan::release). Returns whether every release was
// answered (the history got the release's event).
bool release_quietly(lock::Store& store, const RunSpec& spec, std::optional<Millis> within = std::nullopt) noexcept {
  std::unique_ptr<lock::Store> bounded;
  try {
    if (within) {
      bounded = store.fresh(redis::RetryPolicy::timeout_cap_within(*within));
    } else {
      store.refresh(); // Sentinel: where the renewals went, after a failover
    }
  } catch (const std::exception& e) {
    log::debug("{}: {}", spec.label, e.what());
    if (within) {
      return false;
    }
  }
  auto released = lock::release_all(bounded ? *bounded : store, spec.locks, spec.request.mode.mode,
                                    spec.request.owner, false,
                                    within ? redis::RetryPolicy::Mode::once : redis::RetryPolicy::Mode::one_shot);
  lock::warn_unreleased(spec.label, spec.locks, released);
  return std::none_of(released.errors.begin(), released.errors.end(), [](const auto& e) { return e != nullptr; });
}

// A lost lease in each lock's history: only the client knows it. After CMD is
// stopped and the release is done or given up, once, best effort, through a
// store whose timeouts are short; never throws. Only a loss a renewal's answer
// proved (the lock gone or another's): a lease that could not be confirmed
// means Redis did not answer, and waiting on it again would hold up the end of
// the run (bench: a silent partition's "CMD dead -> rlock exited").
void log_lost_quietly(lock::Store& store, const RunSpec& spec, const LeaseState& lease) noexcept {
  if (!lease.lost) {
    return;
  }
  try {
    auto brief = store.fresh(Millis(300));
    const std::string& why = lease.lost_reason;
    for (const auto& keys : spec.locks) {
      brief->log_event(keys, "lost", spec.request.owner, {{"why", why.substr(0, 300)}});
    }
  } catch (const std::exception& e) {
    log::debug("{}: {}", spec.label, e.what());
  }
}

// --hold-min: let the locks expire `left` from now instead of releasing them.
// Returns false when some lock is not ours any more (release them instead).
bool hold_quietly(lock::Store& store, const RunSpec& spec, Millis left) noexcept {
  try {
    store.refresh();
    bool ours = true;
    for (const auto& keys : spec.locks) {
      ours = store.renew(keys, spec.request.mode.mode, spec.request.owner, lock::kept_lease(left),
                         redis::RetryPolicy::Mode::one_shot, {})
                     .check == lock::OwnerCheck::ok &&
             ours;
    }
    return ours;
  } catch (const std::exception& e) {
    log::warning("{}: could not keep the lock for --hold-min: {}", spec.label, e.what());
    return true; // it stays until its current lease ends; releasing would fail alike
  }
}

// --once-per: records CMD's completion in the current window, before the
// release; never throws (CMD's status stands: when nothing could be recorded,
// a later run in this window runs CMD again, and says so here).
void record_done_quietly(lock::Store& store, const RunSpec& spec) noexcept {
  const auto& keys = spec.locks.front();
  try {
    store.refresh();
    auto done = store.record_done(keys, spec.request.owner, *spec.once_per, spec.request.info, 0);
    if (done.check != lock::OwnerCheck::ok) {
      log::warning("{}: completion not recorded for --once-per: the lock is not held by this run any more; a "
                   "later run in this window runs CMD again",
                   spec.label);
      return;
    }
    log::debug("{}: done in the window {} .. {} (server ms), recorded at {}", spec.label,
               done.window.start_ms, done.window.end_ms, done.done_at_ms);
  } catch (const std::exception& e) {
    log::warning("{}: could not record the completion for --once-per (a later run in this window runs CMD "
                 "again): {}",
                 spec.label, e.what());
  }
}

// What Stopping::turn said, on stderr.
void say(const std::vector<Said>& lines) {
  for (const auto& line : lines) {
    switch (line.level) {
    case Said::Level::error:
      log::error("{}", line.text);
      break;
    case Said::Level::warning:
      log::warning("{}", line.text);
      break;
    case Said::Level::info:
      log::info("{}", line.text);
      break;
    }
  }
}

// The job's process group: where the terminal goes back to after CMD, and
// what a Ctrl-Z stops (rlock is the process the shell waits for).
pid_t job_group() {
  return getpgrp();
}

// Ctrl-Z at the terminal stopped CMD: take the terminal back and stop the job.
void stop_job() {
  tcsetpgrp(STDIN_FILENO, job_group());
  kill(getpid(), SIGSTOP);
}

// The part of supervise() after CMD started; supervise() makes sure it cannot
// leave CMD's tree running without its lock if it throws. `store` null: CMD
// runs without a lock (supervise_unlocked): no renewals, no release.
int supervise_child(lock::Store* store, const RunSpec& spec, TimePoint acquired_at, SignalFd& signals,
                    Guarded& child, bool tty) {
  const pid_t cmd = child.cmd();
  std::optional<Watchdog> dog;
  if (store != nullptr) {
    // A renewal in flight never holds up the run's end longer than an interval.
    dog.emplace(store->fresh(redis::RetryPolicy::renewal_timeout_cap(spec.request.lease / 3)), spec.locks,
                spec.request.mode.mode, spec.request.owner, spec.request.lease, spec.kill_after, acquired_at,
                spec.request.sync);
  }
  StopPlan::Config config;
  config.on_lost = spec.on_lost;
  config.kill_after = spec.kill_after;
  config.first_renewal = dog ? dog->first_renewal() : TimePoint::max();
  if (spec.max_hold) {
    config.max_hold_at = acquired_at + *spec.max_hold;
  }
  if (spec.hold_min && dog) {
    config.hold_until = acquired_at + *spec.hold_min;
  }
  config.wait_descendants = spec.wait_descendants;
  Stopping stopping(config, {spec.label, spec.max_hold});
  StopPlan& plan = stopping.plan();
  LiveTree tree(child);

  bool cmd_exited = false;
  bool tree_empty = false;
  bool guardian_lost = false;
  int cmd_status = 0;
  for (;;) {
    LeaseState lease; // without a lock: no lease to end
    lease.stop_at = lease.kill_at = TimePoint::max();
    if (dog) {
      lease = dog->state();
    }
    // Stop first, log after (Stopping::turn): nothing about stopping CMD waits on output.
    auto step = stopping.turn(Clock::now(), lease, {dog && dog->started(), cmd_exited, tree_empty}, tree);
    say(step.said);
    if (step.finished) {
      break;
    }
    if (step.start_renewals && dog) {
      dog->start();
      // The wait's subscriptions, idle since the lock was taken: closed now,
      // off the ways from "acquired" to CMD and from CMD's end to the release
      // (closing one has the server unsubscribe on the core CMD would use);
      // a shorter run leaves them to its exit.
      lock::close_finished_waits();
    }

    pollfd fds[3] = {{signals.fd(), POLLIN, 0}, {child.report_fd(), POLLIN, 0}, {dog ? dog->event_fd() : -1, POLLIN, 0}};
    ::poll(fds, dog ? 3 : 2, step.wake == TimePoint::max() ? -1 : poll_timeout_ms(step.wake));

    while (int sig = signals.take()) {
      if (sig == SIGCHLD || sig == SIGTTOU) {
        continue; // reaped below
      }
      if (sig == SIGCONT) {
        // The job was continued ("fg") after a Ctrl-Z: give the terminal
        // back to CMD and wake it.
        if (tty) {
          tcsetpgrp(STDIN_FILENO, cmd);
        }
        killpg(cmd, SIGCONT);
        continue;
      }
      tree.signal(sig); // the caller's signal, passed on
    }
    // Reaped first, read after: a guardian that ended has written all it had
    // to say. While it lives, rlock's only child is the guardian; after, CMD's
    // tree is reparented here, and CMD is reaped here.
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
      if (child.reaped(pid, status) || pid != cmd) {
        continue; // the guardian, or an orphan of CMD's tree after it
      }
      if (!WIFSTOPPED(status)) {
        cmd_exited = true;
        cmd_status = status;
      } else if (tty) {
        stop_job();
      }
    }
    bool none_left = pid < 0 && errno == ECHILD;
    while (auto reported = child.next()) {
      if (reported->kind == Guarded::Report::Kind::exited) {
        cmd_exited = true;
        cmd_status = reported->status;
        none_left = none_left || reported->last; // the guardian, about to exit, is not CMD's
      } else if (tty) {
        stop_job();
      }
    }
    if (auto lost = child.lost_guardian(); lost && !guardian_lost) {
      // The guardian was killed: nothing would stop CMD's tree if rlock were
      // killed now. Stop it, as when rlock is killed, and say why, also when
      // CMD was reaped here first (its keeper's death killed it: a
      // parent-death SIGKILL) and only its leftovers are to be stopped.
      guardian_lost = true;
      plan.orphaned();
    }
    if (guardian_lost && none_left && !cmd_exited) {
      cmd_exited = true; // it reaped CMD and could not say how it ended
      cmd_status = *child.lost_guardian();
    }
    tree_empty = cmd_exited && none_left;
  }

  LeaseState lease;
  lease.stop_at = lease.kill_at = TimePoint::max();
  if (dog) {
    dog->stop();
    lease = dog->state();
  }
  if (tty) {
    tcsetpgrp(STDIN_FILENO, job_group());
  }
  const int status = plan.exit_status(exit_status_of(cmd_status));
  if (store == nullptr) {
    return status;
  }
  // After a lost lease: at most one bounded try, none once it may have expired.
  auto release = plan.release(Clock::now(), {lease.stop_at, lease.kill_at, lease.lost});
  if (!release.send) {
    log::debug("{}: not released: the lease was lost and may have expired by now", spec.label);
    log_lost_quietly(*store, spec, lease);
    return status;
  }
  if (release.within) {
    bool answered = false;
    {
      // The history: this run ended by losing its lock (it exits 76), not by
      // a normal release, whether the loss was proven or not confirmed in time.
      lock::HistoryEnding ending("lost", lease.lost ? lease.lost_reason
                                                    : fmt::format("no renewal could be confirmed in time{}",
                                                                  lease.last_error.empty() ? "" : " (" + lease.last_error + ")"));
      answered = release_quietly(*store, spec, release.within);
    }
    if (!answered) {
      log_lost_quietly(*store, spec, lease);
    }
    return status;
  }
  // Recorded while the lock is still held: no other run can take it between
  // the record and the release and miss the record.
  if (spec.once_per && status == 0) {
    record_done_quietly(*store, spec);
  }
  auto hold = plan.hold_for(Clock::now());
  if (!hold || !hold_quietly(*store, spec, *hold)) {
    release_quietly(*store, spec);
  }
  return status;
}

// supervise_child, and whatever goes wrong in it, CMD's tree does not go on
// without its lock (with --on-lost ignore it goes on, as if rlock had died).
int supervise_guarded(lock::Store* store, const RunSpec& spec, TimePoint acquired_at, SignalFd& signals,
                      Guarded& child, bool tty) {
  try {
    return supervise_child(store, spec, acquired_at, signals, child, tty);
  } catch (...) {
    if (spec.on_lost != OnLost::ignore || store == nullptr) {
      kill_tree(getpid());
    }
    child.disown(); // CMD's tree goes on (--on-lost ignore): nothing releases after rlock
    if (tty) {
      tcsetpgrp(STDIN_FILENO, job_group());
    }
    if (store != nullptr) {
      release_quietly(*store, spec);
    }
    throw;
  }
}

} // namespace

SignalFd make_run_signals() {
  ignore_sigpipe();
  // SIGTTOU: handing the terminal to CMD's group and back must not stop us.
  return SignalFd(
      {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGCONT, SIGTTOU});
}

Guarded prepare_guardian(const RunSpec& spec) {
  Guarded::Options options;
  options.kill_if_orphaned = spec.on_lost != OnLost::ignore;
  options.release_spec = spec.release_spec;
  return Guarded::prepare(spec.child_argv, options);
}

int supervise(lock::Store& store, const RunSpec& spec, const std::vector<lock::AcquireResult>& acquired,
              SignalFd& signals, Guarded& child) {
  // Decided now, not before the wait: the job may have been put in the
  // background meanwhile.
  const bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == job_group();
  std::string names, fences;
  // The lease bound that runs out first: the earliest lease start among the
  // locks (each one's acquisition, or, for one taken before a wait for the
  // others, its renewal once the last was taken: lock::acquire_all), so the
  // lease clock starts when the last one is taken.
  TimePoint acquired_at = TimePoint::max();
  for (std::size_t i = 0; i < spec.locks.size(); ++i) {
    names += (i ? "," : "") + spec.locks[i].name;
    fences += (i ? "," : "") + std::to_string(acquired[i].fence);
    acquired_at = std::min(acquired_at, acquired[i].sent_at);
  }
  setenv("RLOCK_NAME", names.c_str(), 1);
  setenv("RLOCK_OWNER", spec.request.owner.c_str(), 1);
  setenv("RLOCK_FENCE", fences.c_str(), 1);
  unsetenv("RLOCK_UNLOCKED"); // an outer `run --if-unavailable run` ran us without a lock; this CMD has one
  for (const auto& [name, value] : spec.child_env) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  try {
    child.go(tty, true);
  } catch (const Error&) {
    release_quietly(store, spec);
    throw;
  }
  return supervise_guarded(&store, spec, acquired_at, signals, child, tty);
}

int supervise_unlocked(const RunSpec& spec, SignalFd& signals, Guarded& child) {
  const bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == job_group();
  std::string names;
  for (std::size_t i = 0; i < spec.locks.size(); ++i) {
    names += (i ? "," : "") + spec.locks[i].name;
  }
  setenv("RLOCK_NAME", names.c_str(), 1);
  setenv("RLOCK_OWNER", "", 1);
  setenv("RLOCK_FENCE", "", 1);
  setenv("RLOCK_UNLOCKED", "1", 1);
  for (const auto& [name, value] : spec.child_env) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  const TimePoint started = Clock::now();
  child.go(tty, false);
  return supervise_guarded(nullptr, spec, started, signals, child, tty);
}

} // namespace rlock::run
