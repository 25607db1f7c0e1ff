#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/tree.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace rlock::run {

namespace {

sighandler_t g_sigpipe_before = SIG_DFL;

// The supervisor's message to the starter. Pipe writes this small are atomic.
struct Launch {
  std::int64_t fence;
  std::int32_t take_terminal;
  std::int32_t unused;
};

// The starter's whole life: wait for the launch message, become CMD.
[[noreturn]] void starter_main(const std::vector<std::string>& args, int launch_fd, int exec_error_fd) {
  setpgid(0, 0); // CMD's own process group (the supervisor sets it too: no race)
  Launch launch{};
  ssize_t got;
  while ((got = ::read(launch_fd, &launch, sizeof launch)) < 0 && errno == EINTR) {
  }
  if (got != sizeof launch) {
    _exit(0); // the supervisor did not get the lock, or died: nothing to start
  }
  if (launch.take_terminal != 0) {
    tcsetpgrp(STDIN_FILENO, getpid()); // every signal is still blocked: SIGTTOU cannot stop us
  }
  setenv("RLOCK_FENCE", std::to_string(launch.fence).c_str(), 1);
  // CMD starts as rlock itself was started: exec resets caught signals, and an
  // ignored one (SIGINT under nohup) stays ignored, as with flock. Undo only
  // what rlock changed: SIGPIPE, the parent-death signal and the blocked mask.
  signal(SIGPIPE, g_sigpipe_before);
  prctl(PR_SET_PDEATHSIG, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  std::vector<char*> argv;
  for (const auto& arg : args) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  ssize_t ignored = ::write(exec_error_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

const char* signal_abbrev(int sig) {
  const char* name = sigabbrev_np(sig);
  return name != nullptr ? name : "?";
}

} // namespace

void ignore_sigpipe() {
  g_sigpipe_before = signal(SIGPIPE, SIG_IGN);
}

pid_t guardian_group() {
  return getpgid(getppid());
}

bool Guardian::fork_supervisor() {
  // Before the fork: the supervisor's orphans (CMD's tree, if it is killed)
  // must find us as their subreaper.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t guardian = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    throw Error(ExitCode::software, fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    prctl(PR_SET_NAME, "rlock-run");
    prctl(PR_SET_PDEATHSIG, parent_death_signal());
    if (getppid() != guardian) {
      kill(getpid(), parent_death_signal()); // it died before PDEATHSIG was set
    }
    setpgid(0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return true;
  }
  setpgid(pid, pid);
  m_supervisor = pid;
  return false;
}

int Guardian::watch(SignalFd& signals, const std::string& label) {
  for (;;) {
    pollfd pfd{signals.fd(), POLLIN, 0};
    ::poll(&pfd, 1, -1);
    while (int sig = signals.take()) {
      if (sig == SIGCHLD || sig == SIGTTOU) {
        continue;
      }
      // Each signal the caller sent reaches the supervisor once; it passes it
      // on to CMD's tree (or ends its wait for the lock).
      kill(m_supervisor, sig);
    }
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != m_supervisor) {
        continue; // an orphan of CMD's tree, after the supervisor died
      }
      if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
      }
      // Killed: CMD's tree is ours now, and nothing renews its lock.
      if (m_kill_if_orphaned) {
        kill_tree(getpid());
      }
      log::error("{}: rlock's supervising process (rlock-run) was killed by SIG{}; {}", label,
                 signal_abbrev(WTERMSIG(status)),
                 m_kill_if_orphaned ? "CMD was stopped; the lock expires by its lease"
                                    : "--on-lost ignore: CMD goes on unprotected");
      return 128 + WTERMSIG(status);
    }
  }
}

Starter::~Starter() {
  if (m_launch >= 0) {
    ::close(m_launch); // never launched: the starter exits
  }
  if (m_exec_error >= 0) {
    ::close(m_exec_error);
  }
}

void Starter::prepare(const std::vector<std::string>& argv) {
  int launch[2] = {-1, -1};
  int exec_error[2] = {-1, -1};
  if (pipe2(launch, O_CLOEXEC) != 0 || pipe2(exec_error, O_CLOEXEC) != 0) {
    int err = errno;
    for (int fd : {launch[0], launch[1], exec_error[0], exec_error[1]}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
    throw Error(ExitCode::software, fmt::format("pipe: {}", std::strerror(err)));
  }
  // A forked child of a process with one thread may run any code; the renewal
  // thread starts only after CMD runs.
  pid_t pid = fork();
  if (pid == 0) {
    ::close(launch[1]);
    ::close(exec_error[0]);
    starter_main(argv, launch[0], exec_error[1]);
  }
  int fork_errno = errno;
  ::close(launch[0]);
  ::close(exec_error[1]);
  m_launch = launch[1];
  m_exec_error = exec_error[0];
  if (pid < 0) {
    throw Error(ExitCode::software, fmt::format("fork: {}", std::strerror(fork_errno)));
  }
  setpgid(pid, pid);
  m_pid = pid;
  m_command = argv.front();
}

pid_t Starter::launch(long long fence, bool take_terminal) {
  Launch launch{fence, take_terminal ? 1 : 0, 0};
  ssize_t sent = ::write(m_launch, &launch, sizeof launch);
  ::close(m_launch);
  m_launch = -1;
  int err = 0;
  ssize_t n;
  while ((n = ::read(m_exec_error, &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(m_exec_error);
  m_exec_error = -1;
  if (sent == sizeof launch && n == 0) {
    return m_pid; // the close-on-exec pipe closed: CMD runs
  }
  while (waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (n != sizeof err) {
    throw Error(ExitCode::software, "the process that was to become CMD died before it could");
  }
  bool missing = err == ENOENT || err == ENOTDIR;
  throw Error(missing ? ExitCode::not_found : ExitCode::cannot_execute,
              fmt::format("{}: {}", printable(m_command), missing ? "command not found" : std::strerror(err)));
}

} // namespace rlock::run
