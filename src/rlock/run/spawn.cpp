#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/tree.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rlock::run {

namespace {

sighandler_t g_sigpipe_before = SIG_DFL;

// rlock's first message to the guardian: start CMD. Pipe writes this small
// are atomic.
struct Launch {
  std::int64_t fence;
  std::int32_t take_terminal;
  std::int32_t unused;
};

// One message from the guardian to rlock.
struct Report {
  enum Kind : std::int32_t { started, spawn_failed, stopped, exited, exited_alone, tree_empty };
  std::int32_t kind;
  std::int32_t value;
};

void send_report(int fd, Report::Kind kind, int value) {
  Report report{kind, static_cast<std::int32_t>(value)};
  while (::write(fd, &report, sizeof report) < 0 && errno == EINTR) {
  }
}

// Closes every descriptor but those in `keep` (sorted ascending).
void close_all_but(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned from = 0;
  for (int fd : keep) {
    if (static_cast<unsigned>(fd) > from) {
      close_range(from, static_cast<unsigned>(fd) - 1, 0);
    }
    from = static_cast<unsigned>(fd) + 1;
  }
  close_range(from, ~0U, 0);
}

// The starter: forked by the guardian while rlock asks for the lock, it waits
// for the launch message and only then becomes CMD (exec), so that neither a
// fork nor posix_spawn's per-signal set-up lies between "acquired" and "CMD
// runs". A forked child of a single-threaded process may run any code.
[[noreturn]] void starter_main(const ChildSpec& spec, int launch_fd, int exec_error_fd) {
  setpgid(0, 0); // CMD's own process group (the guardian sets it too: no race)
  Launch launch{};
  ssize_t got;
  while ((got = ::read(launch_fd, &launch, sizeof launch)) < 0 && errno == EINTR) {
  }
  if (got != sizeof launch) {
    _exit(0); // rlock did not get the lock, or died: nothing to start
  }
  if (launch.take_terminal != 0) {
    tcsetpgrp(STDIN_FILENO, getpid()); // every signal is still blocked: SIGTTOU cannot stop us
  }
  setenv("RLOCK_FENCE", std::to_string(launch.fence).c_str(), 1);
  // CMD starts as rlock itself was started: exec resets caught signals, and an
  // ignored one (SIGINT under nohup) stays ignored, as with flock. Undo only
  // what rlock changed: SIGPIPE, and the blocked mask.
  signal(SIGPIPE, g_sigpipe_before);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  execvp(argv[0], argv.data()); // also runs a script without "#!" with /bin/sh
  int err = errno;
  ssize_t ignored = ::write(exec_error_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

// The guardian's whole life, in a forked copy of rlock that had one thread.
[[noreturn]] void guardian_main(const ChildSpec& spec, int ctl_fd, int report_fd, int launch_fd) {
  prctl(PR_SET_NAME, "rlock-guardian");
  // Out of every group rlock or CMD is in, so no group signal meant for them
  // reaches it; deaf to every signal that can be blocked.
  setpgid(0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  int exec_error[2] = {-1, -1};
  if (sig_fd < 0 || pipe2(exec_error, O_CLOEXEC) != 0) {
    send_report(report_fd, Report::spawn_failed, errno);
    _exit(0);
  }

  pid_t cmd = fork();
  if (cmd == 0) {
    ::close(ctl_fd);
    ::close(report_fd);
    ::close(sig_fd);
    ::close(exec_error[0]);
    starter_main(spec, launch_fd, exec_error[1]);
  }
  if (cmd < 0) {
    send_report(report_fd, Report::spawn_failed, errno);
    _exit(0);
  }
  setpgid(cmd, cmd);
  ::close(launch_fd);
  ::close(exec_error[1]);
  int exec_fd = exec_error[0];
  // Above 0-2 (rlock may have been started with stdin closed), which become
  // /dev/null: hold nothing of rlock's open (its terminal, a pipe someone
  // waits to see closed), only the pipes to rlock and the starter and the
  // signalfd.
  for (int* fd : {&ctl_fd, &report_fd, &sig_fd, &exec_fd}) {
    if (*fd <= 2) {
      *fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
    }
  }
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2 && null_fd >= 0; ++fd) {
    dup2(null_fd, fd);
  }
  close_all_but({0, 1, 2, ctl_fd, report_fd, sig_fd, exec_fd});

  bool cmd_done = false;
  for (;;) {
    pollfd fds[3] = {{ctl_fd, POLLIN, 0}, {sig_fd, POLLIN, 0}, {exec_fd, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      continue;
    }
    if (fds[2].revents != 0) {
      // The exec either failed (its errno arrives) or happened (the pipe,
      // close-on-exec, reads EOF): said before CMD's end, reaped below.
      int err = 0;
      ssize_t n;
      while ((n = ::read(exec_fd, &err, sizeof err)) < 0 && errno == EINTR) {
      }
      bool failed = n == sizeof err;
      send_report(report_fd, failed ? Report::spawn_failed : Report::started, failed ? err : cmd);
      ::close(exec_fd);
      exec_fd = -1;
    }
    if (fds[1].revents != 0) {
      signalfd_siginfo info;
      while (::read(sig_fd, &info, sizeof info) > 0) {
      }
      int status = 0;
      int cmd_status = -1;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
        if (pid != cmd) {
          continue; // an orphan of CMD's tree, reparented to us
        }
        if (WIFSTOPPED(status)) {
          send_report(report_fd, Report::stopped, WSTOPSIG(status));
        } else {
          cmd_status = status;
        }
      }
      // A process's children are reparented to us before it can be reaped:
      // no child left means no process of CMD's tree is left. CMD's end and
      // whether it left anything behind are said in one report.
      bool alone = pid < 0 && errno == ECHILD;
      if (cmd_status >= 0) {
        send_report(report_fd, alone ? Report::exited_alone : Report::exited, cmd_status);
        cmd_done = true;
      } else if (alone && cmd_done) {
        send_report(report_fd, Report::tree_empty, 0);
      }
      if (alone && cmd_done) {
        // Nothing left to guard: exit now, so that tearing this process down
        // overlaps rlock's release instead of following it.
        _exit(0);
      }
    }
    if (fds[0].revents != 0) {
      char byte = 0;
      ssize_t n = ::read(ctl_fd, &byte, 1);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n == 0 && spec.kill_if_orphaned) {
        kill_tree(getpid()); // rlock died: nothing covers CMD's tree any more
      }
      _exit(0);
    }
  }
}

} // namespace

void ignore_sigpipe() {
  g_sigpipe_before = signal(SIGPIPE, SIG_IGN);
}

Guardian::~Guardian() {
  disarm();
}

void Guardian::prepare(const ChildSpec& spec) {
  int ctl[2] = {-1, -1};
  int report[2] = {-1, -1};
  int launch[2] = {-1, -1};
  if (pipe2(ctl, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0 || pipe2(launch, O_CLOEXEC) != 0) {
    int err = errno;
    for (int fd : {ctl[0], ctl[1], report[0], report[1], launch[0], launch[1]}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
    throw Error(ExitCode::software, fmt::format("pipe: {}", std::strerror(err)));
  }
  // fork, not vfork or clone(CLONE_VM): the guardian outlives rlock and runs
  // ordinary code. rlock has a single thread here (the renewal thread starts
  // later), so the copy is in a consistent state.
  pid_t pid = fork();
  if (pid == 0) {
    ::close(ctl[1]);
    ::close(report[0]);
    ::close(launch[1]); // only rlock may write it: its EOF means "never launched"
    guardian_main(spec, ctl[0], report[1], launch[0]);
  }
  int fork_errno = errno;
  ::close(ctl[0]);
  ::close(report[1]);
  ::close(launch[0]);
  m_ctl = ctl[1];
  m_report = report[0];
  m_launch = launch[1];
  if (pid < 0) {
    disarm();
    throw Error(ExitCode::software, fmt::format("fork: {}", std::strerror(fork_errno)));
  }
  m_pid = pid;
  m_command = spec.argv.front();
}

void Guardian::launch(long long fence, bool take_terminal) {
  Launch launch{fence, take_terminal ? 1 : 0, 0};
  bool sent = ::write(m_launch, &launch, sizeof launch) == sizeof launch;
  ::close(m_launch);
  m_launch = -1;
  Report first{};
  ssize_t n = -1;
  while (sent && (n = ::read(m_report, &first, sizeof first)) < 0 && errno == EINTR) {
  }
  if (n == sizeof first && first.kind == Report::started) {
    m_child = first.value;
    fcntl(m_report, F_SETFL, fcntl(m_report, F_GETFL) | O_NONBLOCK);
    return;
  }
  disarm();
  if (n != sizeof first) {
    throw Error(ExitCode::software, "the guardian process died before starting the command");
  }
  int err = first.value;
  bool missing = err == ENOENT || err == ENOTDIR;
  throw Error(missing ? ExitCode::not_found : ExitCode::cannot_execute,
              fmt::format("{}: {}", printable(m_command), missing ? "command not found" : std::strerror(err)));
}

std::vector<ChildEvent> Guardian::read_events() {
  std::vector<ChildEvent> events;
  if (m_report < 0 || m_gone) {
    return events;
  }
  for (;;) {
    Report report{};
    ssize_t n = ::read(m_report, &report, sizeof report);
    if (n == sizeof report) {
      switch (report.kind) {
      case Report::stopped:
        events.push_back({ChildEvent::Kind::stopped, report.value});
        break;
      case Report::exited:
        events.push_back({ChildEvent::Kind::exited, report.value});
        break;
      case Report::exited_alone:
        events.push_back({ChildEvent::Kind::exited, report.value});
        events.push_back({ChildEvent::Kind::tree_empty, 0});
        m_tree_empty = true;
        break;
      case Report::tree_empty:
        events.push_back({ChildEvent::Kind::tree_empty, 0});
        m_tree_empty = true;
        break;
      default:
        break;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n == 0) {
      m_gone = true;
      if (!m_tree_empty) { // after the tree is gone, the guardian exits by itself
        events.push_back({ChildEvent::Kind::guardian_gone, 0});
      }
    }
    return events;
  }
}

void Guardian::disarm() noexcept {
  if (m_launch >= 0) {
    ::close(m_launch); // the starter exits without running CMD
    m_launch = -1;
  }
  if (m_ctl >= 0) {
    char byte = 'x';
    ssize_t ignored = ::write(m_ctl, &byte, 1);
    (void)ignored;
    ::close(m_ctl);
    m_ctl = -1;
  }
  if (m_pid > 0) {
    while (waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
  }
  if (m_report >= 0) {
    ::close(m_report);
    m_report = -1;
  }
}

} // namespace rlock::run
