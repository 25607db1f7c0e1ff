#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/supervisor.hpp>
#include <rlock/run/tree.hpp>
#include <rlock/run/guardian_image.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rlock::run {

namespace {

sighandler_t g_sigpipe_before = SIG_DFL;

// Where execvp would find `file`, for running a script without "#!" through
// /bin/sh as execvp does (posix_spawnp answers ENOEXEC instead).
std::string find_in_path(const std::string& file) {
  if (file.find('/') != std::string::npos) {
    return file;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/bin:/usr/bin";
  for (;;) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + file;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) {
      return file;
    }
    rest = rest.substr(colon + 1);
  }
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
    throw Error(Outcome::failed, fmt::format("fork: {}", std::strerror(errno)));
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

namespace {

// The guardian's state across its execs (src/guardian/guardian.c reads the
// same): "SUPERVISOR_PID KILL_FLAG EXE_FD SIGNALS_HEX".
constexpr const char* k_guardian_env = "RLOCK_GUARDIAN_OF";
constexpr const char* k_guardian_name_env = "RLOCK_GUARDIAN_NAME";
constexpr const char* k_guardian_label_env = "RLOCK_GUARDIAN_LABEL";

// The command line as it is now (URL passwords overwritten already), so that
// ps shows the guardian as before; empty if it cannot be read.
std::string own_cmdline() {
  std::string cmdline;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return cmdline;
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {
    cmdline.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!cmdline.empty() && cmdline.back() != '\0') {
    cmdline.push_back('\0');
  }
  return cmdline;
}

} // namespace

void Guardian::become_small(const SignalFd& signals, const std::string& label) {
  if (k_guardian_image_size == 0) {
    return; // not built for this machine
  }
  std::string cmdline = own_cmdline();
  if (cmdline.empty()) {
    return;
  }
  std::vector<char*> argv;
  for (std::size_t at = 0; at < cmdline.size(); at = cmdline.find('\0', at) + 1) {
    argv.push_back(cmdline.data() + at);
  }
  argv.push_back(nullptr);
  // The small image runs this program file again if the supervisor is killed:
  // an fd on it (not the path: a package upgrade may have replaced the file).
  int exe = ::open("/proc/self/exe", O_RDONLY);
  if (exe < 0) {
    return;
  }
  // MFD_EXEC (Linux 6.3+) says it is meant to be executed (a kernel with
  // vm.memfd_noexec=1 seals memfds made without it against exec; with 2 it
  // refuses it, and the caller watches from here); older kernels refuse the flag.
  constexpr unsigned k_mfd_exec = 0x0010U;
  int image = static_cast<int>(::memfd_create("rlock-guardian", MFD_CLOEXEC | k_mfd_exec));
  if (image < 0 && errno == EINVAL) {
    image = static_cast<int>(::memfd_create("rlock-guardian", MFD_CLOEXEC));
  }
  if (image < 0 || ::write(image, k_guardian_image, k_guardian_image_size) !=
                       static_cast<ssize_t>(k_guardian_image_size)) {
    if (image >= 0) {
      ::close(image);
    }
    ::close(exe);
    return;
  }
  // Linux's sigset_t starts with signal N at bit N-1 of an unsigned long.
  const unsigned long mask = *reinterpret_cast<const unsigned long*>(&signals.set());
  char comm[17] = {};
  prctl(PR_GET_NAME, comm);
  std::string state = fmt::format("{}={} {} {} {:x}", k_guardian_env, m_supervisor, m_kill_if_orphaned ? 1 : 0, exe, mask);
  std::string name_env = fmt::format("{}={}", k_guardian_name_env, comm);
  std::string label_env = fmt::format("{}={}", k_guardian_label_env, label);
  std::vector<char*> envp{state.data(), name_env.data(), label_env.data()};
  // A sanitizer build's settings (where its reports go) stay, for the hand-over.
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string_view::npos && entry.substr(0, eq).ends_with("SAN_OPTIONS")) {
      envp.push_back(*e);
    }
  }
  envp.push_back(nullptr);
  std::fflush(stdout);
  log::flush(std::chrono::milliseconds(1000));
  ::execveat(image, "", argv.data(), envp.data(), AT_EMPTY_PATH);
  ::close(image);
  ::close(exe);
}

std::optional<int> Guardian::resume_after_exec() {
  const char* state = std::getenv(k_guardian_env);
  if (state == nullptr) {
    return std::nullopt;
  }
  long pid = 0;
  int kill_flag = 0;
  int exe = -1;
  int fields = std::sscanf(state, "%ld %d %d", &pid, &kill_flag, &exe);
  const char* name = std::getenv(k_guardian_name_env);
  const char* label_env = std::getenv(k_guardian_label_env);
  std::string label = label_env != nullptr ? label_env : "run";
  if (name != nullptr) {
    prctl(PR_SET_NAME, name);
  }
  ::unsetenv(k_guardian_env);
  ::unsetenv(k_guardian_name_env);
  ::unsetenv(k_guardian_label_env);
  siginfo_t info{};
  if (fields < 3 || pid <= 0 || pid > INT_MAX ||
      ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return std::nullopt; // not set by become_small for a child of this process
  }
  if (exe > STDERR_FILENO) {
    ::close(exe); // the fd this program was started from
  }
  SignalFd signals = make_run_signals(); // the same set, blocked since before the exec
  Guardian guardian(kill_flag != 0);
  guardian.m_supervisor = static_cast<pid_t>(pid);
  return guardian.watch(signals, label);
}

int Guardian::watch(SignalFd& signals, const std::string& label) {
  // Looks before it waits: a hand-over from the small image comes after that
  // image took the SIGCHLD of the supervisor's end.
  for (;;) {
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
    pollfd pfd{signals.fd(), POLLIN, 0};
    ::poll(&pfd, 1, -1);
  }
}

pid_t spawn_cmd(const std::vector<std::string>& args, bool take_terminal) {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // exec resets caught signals; rlock changed only SIGPIPE (ignored while it
  // supervises) and the parent-death signal (blocked, never ignored).
  sigset_t defaults;
  sigemptyset(&defaults);
  if (g_sigpipe_before == SIG_DFL) {
    sigaddset(&defaults, SIGPIPE);
  }
  // glibc's posix_spawn leaves its own internal signals (32 and 33: thread
  // cancellation, setxid) ignored in the child unless they are in this set,
  // and sigaddset refuses them. sigset_t is a bit array on Linux (signal N is
  // bit N-1): set them directly, so CMD starts with nothing ignored that
  // rlock's caller did not ignore (as with flock's execvp).
  for (int sig = __SIGRTMIN; sig < SIGRTMIN; ++sig) {
    constexpr int k_bits = 8 * sizeof(unsigned long);
    reinterpret_cast<unsigned long*>(&defaults)[(sig - 1) / k_bits] |= 1UL << ((sig - 1) % k_bits);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);
  if (take_terminal) {
    // Done in the child before exec, while glibc keeps every signal blocked
    // there (so SIGTTOU cannot stop it).
    posix_spawn_file_actions_addtcsetpgrp_np(&actions, STDIN_FILENO);
  }
  std::vector<char*> argv;
  for (const auto& arg : args) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  if (err == ENOEXEC) {
    std::string script = find_in_path(args.front());
    std::vector<char*> sh_argv{const_cast<char*>("/bin/sh"), script.data()};
    sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());
    err = posix_spawn(&pid, "/bin/sh", &actions, &attr, sh_argv.data(), environ);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err == 0) {
    return pid;
  }
  bool missing = err == ENOENT || err == ENOTDIR;
  throw Error(
      missing ? Outcome::not_found : Outcome::cannot_execute,
      fmt::format("{}: {}", printable(args.front()), missing ? "command not found" : std::strerror(err)));
}

} // namespace rlock::run
