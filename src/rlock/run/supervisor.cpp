#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/supervisor.hpp>
#include <rlock/run/watchdog.hpp>

#include <fmt/format.h>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

// --hold-min: let the lock expire at acquisition + DUR instead of releasing
// it now. Returns false when there is nothing left to hold (release instead).
bool hold_until(redis::Connection& conn, const RunSpec& spec, TimePoint acquired_at) noexcept {
  auto left = std::chrono::ceil<Millis>(acquired_at + *spec.hold_min - Clock::now());
  if (left <= Millis(0)) {
    return false;
  }
  try {
    auto result = lock::renew(conn, spec.request.keys, spec.request.owner, left);
    return result.check == lock::OwnerCheck::ok;
  } catch (const std::exception& e) {
    log::warning("{}: could not keep the lock for --hold-min: {}", spec.label, e.what());
    return true; // it stays until its current lease ends; releasing would fail alike
  }
}

void set_child_env(const RunSpec& spec, long long fence) {
  setenv("RLOCK_NAME", spec.request.keys.name.c_str(), 1);
  setenv("RLOCK_OWNER", spec.request.owner.c_str(), 1);
  setenv("RLOCK_FENCE", std::to_string(fence).c_str(), 1);
  setenv("RLOCK_URL", spec.url.c_str(), 1);
}

} // namespace

SignalFd make_run_signals() {
  ignore_sigpipe();
  // SIGTTOU: handing the terminal to the child's group and back must not stop us.
  return SignalFd({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGCONT, SIGTTOU});
}

namespace {
// The part of supervise() after the child started; supervise() makes sure it
// cannot leave the child running if it throws.
int supervise_child(redis::Connection& conn, const RunSpec& spec, TimePoint acquired_at,
                    SignalFd& signals, pid_t child, bool guarded, bool tty);
} // namespace

int supervise(redis::Connection& conn, const RunSpec& spec, const lock::AcquireResult& acquired,
              SignalFd& signals) {
  const TimePoint acquired_at = acquired.sent_at;
  const bool guarded = spec.on_lost != OnLost::ignore;
  const bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  set_child_env(spec, acquired.fence);

  pid_t child = -1;
  try {
    child = spawn_child({spec.child_argv, guarded, tty});
  } catch (const Error&) {
    release_quietly(conn, spec);
    throw;
  }
  try {
    return supervise_child(conn, spec, acquired_at, signals, child, guarded, tty);
  } catch (...) {
    // Whatever went wrong, the command must not go on without its lock
    // (with --on-lost ignore it goes on, as if rlock had died).
    if (guarded) {
      signal_tree(child, SIGKILL, -1);
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    if (tty) {
      tcsetpgrp(STDIN_FILENO, getpgrp());
    }
    release_quietly(conn, spec);
    throw;
  }
}

namespace {

int supervise_child(redis::Connection& conn, const RunSpec& spec, TimePoint acquired_at,
                    SignalFd& signals, pid_t child, bool guarded, bool tty) {
  Guardian guardian;
  if (guarded) {
    guardian.start(child);
  }
  Watchdog dog(conn.endpoint(), conn.timeouts(), spec.request.keys, spec.request.owner, spec.request.lease,
               spec.kill_after, acquired_at);

  std::optional<int> child_status;
  bool lost = false;       // the lock was lost (or could not be confirmed)
  bool max_held = false;   // --max-hold ran out
  bool forwarded = false;  // we passed a signal on to the child
  constexpr TimePoint k_never = TimePoint::max();
  TimePoint kill_at = k_never; // SIGKILL escalation
  const TimePoint max_hold_at = spec.max_hold ? acquired_at + *spec.max_hold : k_never;

  auto stop_child = [&](bool hard, TimePoint latest_kill) {
    if (hard) {
      signal_tree(child, SIGKILL, guardian.pid());
      kill_at = k_never;
    } else {
      signal_tree(child, SIGTERM, guardian.pid());
      kill_at = std::min(Clock::now() + spec.kill_after, latest_kill);
    }
  };

  while (!child_status) {
    LeaseState lease = dog.state();
    TimePoint now = Clock::now();
    if (!dog.started() && now >= dog.first_renewal()) {
      dog.start();
    }
    if (!lost && (lease.lost || now >= lease.stop_at)) {
      lost = true;
      std::string reason =
          lease.lost ? lease.lost_reason
                     : fmt::format("no renewal could be confirmed in time{}",
                                   lease.last_error.empty() ? "" : " (" + lease.last_error + ")");
      if (spec.on_lost == OnLost::ignore) {
        log::warning("{}: lock lost: {}; --on-lost ignore: CMD keeps running unprotected", spec.label, reason);
      } else {
        bool hard = spec.on_lost == OnLost::kill || now >= lease.kill_at;
        fmt::print(stderr, "rlock: {}: lock lost: {}; stopping CMD ({})\n", spec.label, reason,
                   hard ? "SIGKILL" : "SIGTERM");
        // A lease we cannot confirm may still be ours on the server: the child
        // must be dead by the time it could expire there.
        stop_child(hard, lease.lost ? k_never : lease.kill_at);
      }
    }
    if (!lost && !max_held && now >= max_hold_at) {
      max_held = true;
      fmt::print(stderr, "rlock: {}: held for --max-hold {}; stopping CMD\n", spec.label,
                 format_duration(*spec.max_hold));
      stop_child(spec.on_lost == OnLost::kill, k_never);
    }
    if (now >= kill_at) {
      signal_tree(child, SIGKILL, guardian.pid());
      kill_at = k_never;
    }

    TimePoint wake = std::min(kill_at, max_held ? k_never : max_hold_at);
    if (!lost) {
      wake = std::min(wake, lease.stop_at);
    }
    if (!dog.started()) {
      wake = std::min(wake, dog.first_renewal());
    }
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {dog.event_fd(), POLLIN, 0}};
    ::poll(fds, 2, wake == k_never ? -1 : poll_timeout_ms(wake));

    while (int sig = signals.take()) {
      if (sig == SIGCHLD || sig == SIGTTOU) {
        continue; // reaped below
      }
      if (sig == SIGCONT) {
        // We were stopped along with a suspended child and are continued
        // ("fg"): give the terminal back and wake the child.
        if (tty) {
          tcsetpgrp(STDIN_FILENO, child);
        }
        killpg(child, SIGCONT);
        continue;
      }
      forwarded = true;
      signal_tree(child, sig, guardian.pid());
    }
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
      if (pid != child) {
        continue; // an orphaned descendant (we are its subreaper)
      }
      if (WIFSTOPPED(status)) {
        if (tty) {
          // Ctrl-Z at the terminal stopped the child: stop ourselves too so the
          // shell sees the job as suspended (as sudo does).
          tcsetpgrp(STDIN_FILENO, getpgrp());
          kill(getpid(), SIGSTOP);
        }
        continue;
      }
      child_status = status;
    }
  }

  if ((lost && guarded) || max_held || forwarded) {
    // Stopping CMD means its whole tree: nothing it started may go on.
    if (tree_alive(child, guardian.pid())) {
      signal_tree(child, SIGKILL, guardian.pid());
    }
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  dog.stop();
  if (tty) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  if (!(spec.hold_min && !lost && !max_held && hold_until(conn, spec, acquired_at))) {
    release_quietly(conn, spec);
  }
  guardian.disarm();
  if ((lost && guarded) || max_held) {
    return static_cast<int>(ExitCode::lost);
  }
  return exit_status_of(*child_status);
}

} // namespace

} // namespace rlock::run
