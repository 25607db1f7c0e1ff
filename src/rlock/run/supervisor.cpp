#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/supervisor.hpp>
#include <rlock/run/tree.hpp>
#include <rlock/run/watchdog.hpp>

#include <fmt/format.h>

#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace rlock::run {

namespace {

// Releases our level of the lock; never throws (the child's status matters more).
void release_quietly(redis::Connection& conn, const RunSpec& spec) noexcept {
  try {
    lock::release(conn, spec.request.keys, spec.request.owner, false, lock::new_op_id());
  } catch (const std::exception& e) {
    log::warning("{}: could not release the lock (it expires by its lease): {}", spec.label, e.what());
  }
}

// --hold-min: let the lock expire `left` from now instead of releasing it.
// Returns false when the lock is not ours any more (release instead).
bool hold_quietly(redis::Connection& conn, const RunSpec& spec, Millis left) noexcept {
  try {
    return lock::renew(conn, spec.request.keys, spec.request.owner, left).check == lock::OwnerCheck::ok;
  } catch (const std::exception& e) {
    log::warning("{}: could not keep the lock for --hold-min: {}", spec.label, e.what());
    return true; // it stays until its current lease ends; releasing would fail alike
  }
}


const char* signal_name(int sig) {
  return sig == SIGKILL ? "SIGKILL" : "SIGTERM";
}

// What a stop that began at this step says, once the signal is on its way.
void report(const RunSpec& spec, const StopPlan::Step& step, const LeaseState& lease,
            const std::vector<Process>& signalled) {
  auto loss = [&](StopPlan::Why why) {
    return why == StopPlan::Why::lost ? lease.lost_reason
                                      : fmt::format("no renewal could be confirmed in time{}",
                                                    lease.last_error.empty() ? "" : " (" + lease.last_error + ")");
  };
  if (step.loss_ignored != StopPlan::Why::none) {
    log::warning("{}: lock lost: {}; --on-lost ignore: CMD keeps running unprotected", spec.label,
                 loss(step.loss_ignored));
  }
  switch (step.why) {
  case StopPlan::Why::lost:
  case StopPlan::Why::unconfirmed:
    log::error("{}: lock lost: {}; stopping CMD ({})", spec.label, loss(step.why), signal_name(step.signal));
    break;
  case StopPlan::Why::max_hold:
    log::error("{}: held for --max-hold {}; stopping CMD ({})", spec.label, format_duration(*spec.max_hold),
               signal_name(step.signal));
    break;
  case StopPlan::Why::leftovers:
    log::warning("{}: CMD exited but left {} running; stopping {} (SIGTERM, SIGKILL after {}) before "
                 "releasing the lock (--wait-descendants waits for them instead)",
                 spec.label, signalled.empty() ? std::string("processes") : describe(signalled),
                 signalled.size() == 1 ? "it" : "them", format_duration(spec.kill_after));
    break;
  case StopPlan::Why::none:
    break;
  }
}

// The part of supervise() after CMD started; supervise() makes sure it cannot
// leave CMD's tree running without its lock if it throws.
int supervise_child(redis::Connection& conn, const RunSpec& spec, TimePoint acquired_at, SignalFd& signals,
                    Guardian& guardian, bool tty) {
  const pid_t cmd = guardian.child();
  Watchdog dog(conn.endpoint(), conn.timeouts(), spec.request.keys, spec.request.owner, spec.request.lease,
               spec.kill_after, acquired_at);
  StopPlan::Config config;
  config.on_lost = spec.on_lost;
  config.kill_after = spec.kill_after;
  config.first_renewal = dog.first_renewal();
  if (spec.max_hold) {
    config.max_hold_at = acquired_at + *spec.max_hold;
  }
  if (spec.hold_min) {
    config.hold_until = acquired_at + *spec.hold_min;
  }
  config.wait_descendants = spec.wait_descendants;
  StopPlan plan(config);

  bool cmd_exited = false;
  bool tree_empty = false;
  int cmd_status = 0;
  for (;;) {
    LeaseState lease = dog.state();
    auto step = plan.step(Clock::now(), {lease.stop_at, lease.kill_at, lease.lost}, dog.started(), cmd_exited,
                          tree_empty);
    if (step.finished) {
      break;
    }
    if (step.start_renewals) {
      dog.start();
    }
    // Stop first, log after: nothing about stopping CMD waits on output.
    std::vector<Process> signalled;
    if (step.signal != 0) {
      signalled = signal_tree(guardian.pid(), cmd, step.signal);
      if (step.signal == SIGTERM) {
        signal_tree(guardian.pid(), cmd, SIGCONT); // a stopped process acts on SIGTERM only once continued
      }
    }
    report(spec, step, lease, signalled);

    pollfd fds[3] = {{signals.fd(), POLLIN, 0}, {dog.event_fd(), POLLIN, 0}, {guardian.event_fd(), POLLIN, 0}};
    ::poll(fds, 3, step.wake == TimePoint::max() ? -1 : poll_timeout_ms(step.wake));

    while (int sig = signals.take()) {
      if (sig == SIGCHLD || sig == SIGTTOU) {
        continue; // the guardian reports CMD's end; it is the only child of ours
      }
      if (sig == SIGCONT) {
        // We were stopped along with a suspended CMD and are continued ("fg"):
        // give the terminal back and wake CMD.
        if (tty) {
          tcsetpgrp(STDIN_FILENO, cmd);
        }
        killpg(cmd, SIGCONT);
        continue;
      }
      signal_tree(guardian.pid(), cmd, sig);
    }
    const bool was_exited = cmd_exited;
    for (const auto& event : guardian.read_events()) {
      switch (event.kind) {
      case ChildEvent::Kind::exited:
        cmd_exited = true;
        cmd_status = event.value;
        break;
      case ChildEvent::Kind::tree_empty:
        tree_empty = true;
        break;
      case ChildEvent::Kind::stopped:
        if (tty) {
          // Ctrl-Z at the terminal stopped CMD: stop ourselves too so the
          // shell sees the job as suspended (as sudo does).
          tcsetpgrp(STDIN_FILENO, getpgrp());
          kill(getpid(), SIGSTOP);
        }
        break;
      case ChildEvent::Kind::guardian_gone:
        throw Error(ExitCode::software, "the guardian process of CMD died (was it killed?); stopping CMD");
      }
    }
    if (cmd_exited && !was_exited && !tree_empty && spec.wait_descendants) {
      log::info("{}: CMD exited; holding the lock until what it left running ends (--wait-descendants): {}",
                spec.label, describe(descendants(guardian.pid())));
    }
  }

  dog.stop();
  if (tty) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  auto hold = plan.hold_for(Clock::now());
  if (!hold || !hold_quietly(conn, spec, *hold)) {
    release_quietly(conn, spec);
  }
  guardian.disarm();
  return plan.exit_status(exit_status_of(cmd_status));
}

} // namespace

SignalFd make_run_signals() {
  ignore_sigpipe();
  // SIGTTOU: handing the terminal to CMD's group and back must not stop us.
  return SignalFd({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGCONT, SIGTTOU});
}

void prepare(const RunSpec& spec, Guardian& guardian) {
  // If the guardian is killed, CMD's orphans come to us instead of init.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  setenv("RLOCK_NAME", spec.request.keys.name.c_str(), 1);
  setenv("RLOCK_OWNER", spec.request.owner.c_str(), 1);
  for (const auto& [name, value] : spec.child_env) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  guardian.prepare({spec.child_argv, spec.on_lost != OnLost::ignore});
}

int supervise(redis::Connection& conn, const RunSpec& spec, const lock::AcquireResult& acquired,
              SignalFd& signals, Guardian& guardian) {
  // Decided now, not before the wait: rlock may have been put in the
  // background meanwhile.
  const bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  try {
    guardian.launch(acquired.fence, tty);
  } catch (const Error&) {
    release_quietly(conn, spec);
    throw;
  }
  try {
    return supervise_child(conn, spec, acquired.sent_at, signals, guardian, tty);
  } catch (...) {
    // Whatever went wrong, CMD's tree must not go on without its lock (with
    // --on-lost ignore it goes on, as if rlock had died).
    if (spec.on_lost != OnLost::ignore) {
      kill_tree(getpid());
    }
    if (tty) {
      tcsetpgrp(STDIN_FILENO, getpgrp());
    }
    release_quietly(conn, spec);
    guardian.disarm();
    throw;
  }
}

} // namespace rlock::run
