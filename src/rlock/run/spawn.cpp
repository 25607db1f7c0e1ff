#include <rlock/core/errors.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

namespace rlock::run {

namespace {

sighandler_t g_sigpipe_before = SIG_DFL;

// The child starts as rlock itself was started (exec resets caught signals;
// an ignored one, e.g. SIGINT under `nohup` or `cmd &`, stays ignored, as with
// flock): undo only what rlock changed, SIGPIPE and the blocked mask.
void reset_signals() {
  signal(SIGPIPE, g_sigpipe_before);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Parent pid of every process, read from /proc/<pid>/stat.
std::map<pid_t, pid_t> parent_map() {
  std::map<pid_t, pid_t> parents;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) {
    return parents;
  }
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    std::string stat = read_proc(static_cast<pid_t>(pid), "stat");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) {
      continue;
    }
    char state = stat[close + 2];
    if (state == 'Z' || state == 'X') {
      continue;
    }
    parents[static_cast<pid_t>(pid)] = static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
  }
  closedir(dir);
  return parents;
}

std::vector<pid_t> descendants_of(pid_t root, pid_t spare) {
  auto parents = parent_map();
  std::vector<pid_t> found{root};
  for (std::size_t i = 0; i < found.size(); ++i) {
    for (const auto& [pid, ppid] : parents) {
      if (ppid == found[i] && pid != spare) {
        found.push_back(pid);
      }
    }
  }
  found.erase(found.begin());
  return found;
}

} // namespace

void ignore_sigpipe() {
  g_sigpipe_before = signal(SIGPIPE, SIG_IGN);
}

pid_t spawn_child(const ChildSpec& spec) {
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  // vfork: the child borrows rlock's memory until it execs (no page tables to
  // copy, and rlock resumes only once CMD is running or has failed to start),
  // as posix_spawn does; posix_spawn itself cannot set PR_SET_PDEATHSIG. The
  // child only makes system calls and leaves exec's error in exec_errno.
  volatile int exec_errno = 0;
  const pid_t parent = getpid();
  const bool take_terminal = spec.take_terminal;
  const bool die_with_parent = spec.die_with_parent;
  char* const* child_argv = argv.data();
  pid_t pid = vfork();
  if (pid == 0) {
    setpgid(0, 0);
    if (take_terminal) {
      tcsetpgrp(STDIN_FILENO, getpid()); // SIGTTOU is still blocked here
    }
    if (die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) {
        _exit(128 + SIGKILL);
      }
    }
    reset_signals();
    execvp(child_argv[0], child_argv);
    exec_errno = errno;
    _exit(127);
  }
  if (pid < 0) {
    throw Error(ExitCode::software, fmt::format("fork: {}", std::strerror(errno)));
  }
  if (take_terminal) {
    tcsetpgrp(STDIN_FILENO, pid);
  }
  if (int err = exec_errno; err != 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool missing = err == ENOENT || err == ENOTDIR;
    throw Error(missing ? ExitCode::not_found : ExitCode::cannot_execute,
                fmt::format("{}: {}", printable(spec.argv.front()),
                            missing ? "command not found" : std::strerror(err)));
  }
  return pid;
}

int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  if (WIFSIGNALED(wait_status)) {
    return 128 + WTERMSIG(wait_status);
  }
  return static_cast<int>(ExitCode::software);
}

void signal_tree(pid_t pgid, int sig, pid_t spare) {
  killpg(pgid, sig);
  for (pid_t pid : descendants_of(getpid(), spare)) {
    kill(pid, sig);
  }
}

bool tree_alive(pid_t pgid, pid_t spare) {
  if (killpg(pgid, 0) == 0) {
    // The group may hold only zombies (our child, not reaped yet): look closer.
    for (const auto& [pid, ppid] : parent_map()) {
      if (getpgid(pid) == pgid) {
        return true;
      }
    }
  }
  return !descendants_of(getpid(), spare).empty();
}

Guardian::~Guardian() {
  disarm();
}

namespace {

// The guardian's whole life. It runs in rlock's memory (see Guardian::start)
// on a stack of its own, so it makes system calls only: none of them fails
// in a way that would write errno (which it shares with rlock's main thread)
// except close_range on kernels older than 5.9.
int guardian_main(void* arg) {
  const auto watch = *static_cast<const Guardian::Watch*>(arg);
  // Out of every group rlock or the child is in, so no group signal for them
  // reaches it; deaf to every signal that can be blocked.
  setpgid(0, 0);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  // Hold nothing of rlock's open (sockets, the terminal) but the pipe.
  if (watch.read_fd > 0) {
    close_range(0, static_cast<unsigned>(watch.read_fd - 1), 0);
  }
  close_range(static_cast<unsigned>(watch.read_fd + 1), ~0U, 0);
  char byte = 0;
  if (::read(watch.read_fd, &byte, 1) != 1) {
    killpg(watch.pgid, SIGKILL); // rlock died: nothing covers the command any more
  }
  _exit(0);
}

} // namespace

void Guardian::start(pid_t pgid) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(ExitCode::software, fmt::format("pipe: {}", std::strerror(errno)));
  }
  // A process of its own (it must outlive rlock) that shares rlock's memory
  // instead of copying it, as posix_spawn's helper does: starting it costs a
  // few microseconds instead of a fork. Without CLONE_FILES its descriptor
  // table is its own, so closing rlock's descriptors there closes nothing here.
  constexpr std::size_t k_stack = 64 * 1024;
  m_stack = std::make_unique<char[]>(k_stack);
  m_watch = {fds[0], pgid};
  pid_t pid = clone(guardian_main, m_stack.get() + k_stack, CLONE_VM | SIGCHLD, &m_watch);
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ExitCode::software, fmt::format("clone: {}", std::strerror(err)));
  }
  ::close(fds[0]);
  m_pid = pid;
  m_fd = fds[1];
}

void Guardian::disarm() noexcept {
  if (m_fd >= 0) {
    char byte = 1;
    ssize_t ignored = ::write(m_fd, &byte, 1);
    (void)ignored;
    ::close(m_fd);
    m_fd = -1;
  }
  if (m_pid > 0) {
    int status = 0;
    while (waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
  }
}

} // namespace rlock::run
