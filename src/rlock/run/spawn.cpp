// CMD under its guardian: spawning it (a memfd image, or rlock's own file),
// the go, its reports, and rlock's resumption after its death.

#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/run/tree.hpp>
#include <rlock/run/guardian_image.hpp>

#include <guardian/guardian.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>

extern char** environ;

namespace rlock::run {

namespace {

sighandler_t g_sigpipe_before = SIG_DFL;

} // namespace

void ignore_sigpipe() {
  g_sigpipe_before = signal(SIGPIPE, SIG_IGN);
}

namespace {

constexpr const char* k_spec_magic = "rlock-release-1";

// The guardian exits with rlock's codes for the same outcomes (guardian.h).
static_assert(guardian_exit_software == static_cast<int>(ExitCode::software));
static_assert(guardian_exit_not_found == static_cast<int>(ExitCode::not_found));

// The signals CMD must get back at their default disposition: rlock ignores
// SIGPIPE while it supervises, and glibc's posix_spawn leaves its own
// internal signals (32 and 33: thread cancellation, setxid) ignored in the
// child unless they are in this set (sigaddset refuses them: sigset_t is a
// bit array on Linux, signal N at bit N-1, so they are set directly). CMD
// starts with nothing ignored that rlock's caller did not ignore (as with
// flock's execvp).
sigset_t signals_to_default() {
  sigset_t defaults;
  sigemptyset(&defaults);
  if (g_sigpipe_before == SIG_DFL) {
    sigaddset(&defaults, SIGPIPE);
  }
  for (int sig = __SIGRTMIN; sig < SIGRTMIN; ++sig) {
    constexpr int k_bits = 8 * sizeof(unsigned long);
    reinterpret_cast<unsigned long*>(&defaults)[(sig - 1) / k_bits] |= 1UL << ((sig - 1) % k_bits);
  }
  return defaults;
}

// The small guardian's image in a memfd, or -1 where it cannot be executed
// (not built for this machine, no memfd, vm.memfd_noexec=2).
int small_image() {
  if (k_guardian_image_size == 0) {
    return -1;
  }
  // MFD_EXEC (Linux 6.3+) says it is meant to be executed (a kernel with
  // vm.memfd_noexec=1 seals memfds made without it against exec; with 2 it
  // refuses it); older kernels refuse the flag.
  constexpr unsigned k_mfd_exec = 0x0010U;
  int image = static_cast<int>(::memfd_create("rlock-guardian", MFD_CLOEXEC | k_mfd_exec));
  if (image < 0 && errno == EINVAL) {
    image = static_cast<int>(::memfd_create("rlock-guardian", MFD_CLOEXEC));
  }
  if (image >= 0 && ::write(image, k_guardian_image, k_guardian_image_size) !=
                        static_cast<ssize_t>(k_guardian_image_size)) {
    ::close(image);
    image = -1;
  }
  return image;
}

// A sealed memfd holding `bytes`, or -1.
int sealed_memfd(const char* name, const std::string& bytes) {
  int fd = static_cast<int>(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) {
    return -1;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

// Where execvp would run `file`: as it is when it names a path; else the first
// executable regular file of that name in PATH, or the first one found that is
// not executable (its exec then fails with EACCES, 126). Empty: not found.
std::string resolve_command(const std::string& file) {
  if (file.find('/') != std::string::npos) {
    return file;
  }
  if (file.empty()) {
    return {};
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/bin:/usr/bin";
  std::string not_executable;
  for (;;) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + file;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
      if (not_executable.empty()) {
        not_executable = candidate;
      }
    }
    if (colon == std::string_view::npos) {
      return not_executable;
    }
    rest = rest.substr(colon + 1);
  }
}

Error cannot_start(const std::string& command, int err) {
  bool missing = err == ENOENT || err == ENOTDIR;
  return Error(missing ? Outcome::not_found : Outcome::cannot_execute,
               fmt::format("{}: {}", printable(command), missing ? "command not found" : std::strerror(err)));
}

void close_fd(int fd) {
  if (fd >= 0) {
    ::close(fd);
  }
}

// One report: false at the end of the pipe (or nothing there, non-blocking).
bool read_report(int fd, std::int32_t (&message)[2], bool* eof) {
  for (;;) {
    ssize_t n = ::read(fd, message, sizeof message);
    if (n == static_cast<ssize_t>(sizeof message)) {
      return true;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    *eof = n == 0 || (n < 0 && errno != EAGAIN);
    return false;
  }
}

} // namespace

// The guardian's spawn: what it is given, and how it went.
struct Guarded::Spawn {
  std::string command; // CMD's name, for messages
  std::string path;    // resolved; empty: not found (said at go())
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  int exe = -1, spec = -1, image = -1, report = -1, go = -1; // the guardian's ends
  pid_t pid = -1;
  int err = 0;

  void run() noexcept;
};

void Guarded::Spawn::run() noexcept {
  std::vector<char*> args;
  for (auto& arg : argv) {
    args.push_back(arg.data());
  }
  args.push_back(nullptr);
  std::vector<char*> env;
  for (auto& entry : envp) {
    env.push_back(entry.data());
  }
  env.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_init(&actions);
  // A process group of its own (set before its exec): a signal to the
  // caller's whole group (timeout -s KILL, a CI runner's cancel, kill -9
  // -PGID) ends rlock, never rlock and its guardian together.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &all); // the guardian acts on no signal rlock's caller sends
  sigset_t defaults = signals_to_default();
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // An fd given as its own target stays open across the exec (glibc clears
  // its close-on-exec flag in the child only). The image too, which the
  // guardian closes first: an emulator that binfmt_misc starts without its O
  // flag (qemu-user as Debian 12's update-binfmts registers it) opens the
  // program by the path exec'd, /proc/self/fd/N, after the exec.
  for (int fd : {exe, spec, report, go, image}) {
    if (fd >= 0) {
      posix_spawn_file_actions_adddup2(&actions, fd, fd);
    }
  }
  err = EINVAL;
  if (image >= 0) {
    std::string image_path = fmt::format("/proc/self/fd/{}", image);
    err = posix_spawn(&pid, image_path.c_str(), &actions, &attr, args.data(), env.data());
  }
  if (err != 0) {
    // rlock's own program file runs the same guardian (guardian_entry).
    err = posix_spawn(&pid, "/proc/self/exe", &actions, &attr, args.data(), env.data());
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int fd : {image, spec, exe, report, go}) {
    close_fd(fd);
  }
}

Guarded Guarded::prepare(const std::vector<std::string>& args, const Options& options) {
  auto spawn = std::make_unique<Spawn>();
  spawn->command = args.front();
  spawn->path = resolve_command(args.front());
  // CMD's orphans come here if the guardian is killed. Where it is refused
  // (qemu-user 7.2 emulates no PR_SET_CHILD_SUBREAPER), the guardian's is
  // too: what CMD's tree orphans goes to init (docs/run.md, under emulation).
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    log::debug("PR_SET_CHILD_SUBREAPER refused ({}): processes orphaned in CMD's tree are not kept below rlock",
               std::strerror(errno));
  }
  Guarded child;
  int report[2];
  int go[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    throw Error(Outcome::failed, fmt::format("pipe: {}", std::strerror(errno)));
  }
  child.m_report = report[0];
  spawn->report = report[1];
  if (::pipe2(go, O_CLOEXEC) != 0) {
    close_fd(spawn->report);
    throw Error(Outcome::failed, fmt::format("pipe: {}", std::strerror(errno)));
  }
  child.m_go = go[1];
  spawn->go = go[0];
  // The guardian executes rlock again when rlock dies: an fd on this program
  // file (not the path: a package upgrade may have replaced the file).
  spawn->exe = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  spawn->spec = options.release_spec.empty() ? -1 : sealed_memfd("rlock-release", options.release_spec);
  if (spawn->exe < 0 || (!options.release_spec.empty() && spawn->spec < 0)) {
    int err = errno;
    for (int fd : {spawn->exe, spawn->spec, spawn->report, spawn->go}) {
      close_fd(fd);
    }
    throw Error(Outcome::failed, fmt::format("cannot start rlock's guardian: {}", std::strerror(err)));
  }
  spawn->image = small_image();
  guardian_state state{guardian_role_guardian, {}};
  state.field[guardian_parent] = getpid();
  state.field[guardian_kill] = options.kill_if_orphaned ? 1 : 0;
  state.field[guardian_exe] = spawn->exe;
  state.field[guardian_spec] = spawn->spec;
  state.field[guardian_report] = spawn->report;
  state.field[guardian_go] = spawn->go;
  state.field[guardian_death_signal] = parent_death_signal();
  state.field[guardian_image] = spawn->image;
  char value[256];
  if (guardian_state_encode(&state, value, sizeof value) == 0) {
    throw Error(Outcome::failed, "cannot start rlock's guardian: its state does not fit");
  }
  spawn->envp.push_back(fmt::format("{}={}", GUARDIAN_ENV, value));
  const std::string prefix = GUARDIAN_ENV "=";
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with(prefix)) {
      spawn->envp.emplace_back(*e);
    }
  }
  spawn->argv = {GUARDIAN_NAME, spawn->path.empty() ? spawn->command : spawn->path};
  spawn->argv.insert(spawn->argv.end(), args.begin(), args.end());
  // Spawned now, before the lock is requested: a waiter's guardian is ready
  // when the lock comes free, and its spawn is not on the way from "acquired"
  // to CMD (bench/run's handover: 1.9 instead of 2.1-2.3 ms). A thread of its
  // own would overlap the spawn with the request too, but costs more than it
  // hides on a loopback round trip (measured: +0.04 ms wall, +0.17 ms CPU).
  spawn->run();
  child.m_spawn = std::move(spawn);
  return child;
}

void Guarded::go(bool take_terminal, bool locked) {
  Spawn& spawn = *m_spawn;
  if (spawn.err != 0) {
    throw Error(Outcome::failed, fmt::format("cannot start rlock's guardian: {}", std::strerror(spawn.err)));
  }
  m_guardian = spawn.pid;
  if (spawn.path.empty()) {
    throw cannot_start(spawn.command, ENOENT);
  }
  // CMD's environment as it is now (RLOCK_NAME, RLOCK_FENCE... set).
  std::string env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.append(*e);
    env.push_back('\0');
  }
  if (env.size() > static_cast<std::size_t>(guardian_go_max_env)) {
    throw Error(Outcome::failed, fmt::format("CMD's environment is too large ({} bytes)", env.size()));
  }
  std::int32_t header[2];
  const guardian_go_message go{take_terminal, locked, static_cast<long>(env.size()), 0};
  guardian_go_encode(&go, header);
  std::string message(reinterpret_cast<const char*>(header), sizeof header);
  message += env;
  bool sent = true;
  for (std::size_t done = 0; done < message.size() && sent;) {
    ssize_t n = ::write(m_go, message.data() + done, message.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    sent = n > 0;
    done += n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  ::close(m_go);
  m_go = -1;
  // Its first reports: the keeper's pid, then CMD runs, or why not. Every
  // signal rlock handles is blocked (read from its signalfd): nothing
  // interrupts this.
  std::int32_t report[2] = {0, 0};
  guardian_event first{};
  bool eof = false;
  bool read = sent;
  while (read && (read = read_report(m_report, report, &eof) && guardian_report_decode(report, &first)) &&
         first.kind == guardian_keeper) {
    m_keeper = first.value;
  }
  if (!read || first.kind != guardian_started) {
    int status = 0;
    waitpid(m_guardian, &status, 0);
    m_guardian = -1;
    if (first.kind == guardian_failed) {
      throw cannot_start(spawn.command, first.value);
    }
    throw Error(Outcome::failed, fmt::format("rlock's guardian ended before CMD started (status {})", status));
  }
  m_cmd = first.value;
  ::fcntl(m_report, F_SETFL, O_NONBLOCK);
}

Guarded::Guarded(Guarded&& other) noexcept
    : m_spawn(std::move(other.m_spawn)), m_guardian(other.m_guardian), m_keeper(other.m_keeper), m_cmd(other.m_cmd),
      m_report(other.m_report), m_go(other.m_go), m_cmd_reported_end(other.m_cmd_reported_end),
      m_guardian_status(other.m_guardian_status) {
  other.m_report = -1;
  other.m_go = -1;
  other.m_guardian = -1;
}

Guarded::~Guarded() {
  close_fd(m_report);
  if (m_go >= 0) {
    // No go: the cancel, and the guardian exits at once, having started
    // nothing (the pipe closing without it would say rlock died waiting).
    std::int32_t cancel[2];
    const guardian_go_message message{0, 0, 0, 1};
    guardian_go_encode(&message, cancel);
    while (::write(m_go, cancel, sizeof cancel) < 0 && errno == EINTR) {
    }
    ::close(m_go);
    m_guardian = m_spawn ? m_spawn->pid : -1;
  }
  // The guardian exits right after it reported the end of CMD's tree (or
  // without a go): reaped here, its time and CMD's count in rlock's (as
  // flock's CMD does in flock's), and no zombie is left to init.
  // Waited for on a pidfd (its exit wakes this at once), at most 1 s: a
  // guardian stopped meanwhile is left to init.
  if (m_guardian <= 0 || waitpid(m_guardian, nullptr, WNOHANG) != 0) {
    return;
  }
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_guardian, 0));
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    ::poll(&pfd, 1, 1000);
    ::close(pidfd);
    waitpid(m_guardian, nullptr, WNOHANG);
    return;
  }
  for (int i = 0; i < 1000 && waitpid(m_guardian, nullptr, WNOHANG) == 0; ++i) {
    usleep(1000); // no pidfd (Linux before 5.3)
  }
}

pid_t Guarded::tree_root() const {
  // The keeper while it lives (below the guardian, or reparented here), not
  // its parent: signals and kills reach CMD's tree, never the keeper, whose
  // report of CMD's end rlock waits for.
  if (m_keeper > 0) {
    auto keeper = process_start(m_keeper);
    if (keeper && !keeper->finished() && (keeper->parent == m_guardian || keeper->parent == getpid())) {
      return m_keeper;
    }
  }
  return m_guardian > 0 ? m_guardian : getpid();
}

bool Guarded::reaped(pid_t pid, int wait_status) {
  if (pid == m_keeper && m_keeper > 0) {
    m_keeper = -1; // reparented here after the guardian's death, and ended
    return true;
  }
  if (pid != m_guardian || m_guardian <= 0) {
    return false;
  }
  if (WIFSTOPPED(wait_status)) {
    return true; // stopped, not gone
  }
  m_guardian = -1;
  m_guardian_status = wait_status;
  return true;
}

std::optional<int> Guarded::lost_guardian() const {
  // Once it is gone and its pipe read to the end, what it did not report it never will.
  if (m_guardian > 0 || m_report >= 0 || m_cmd_reported_end) {
    return std::nullopt;
  }
  return m_guardian_status;
}

void Guarded::disown() {
  if (m_keeper > 0 && tree_root() == m_keeper) {
    // First: its death sends CMD's tree to the guardian, then here.
    kill(m_keeper, SIGKILL);
    while (waitpid(m_keeper, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  m_keeper = -1;
  if (m_guardian > 0) {
    kill(m_guardian, SIGKILL);
    int status = 0;
    while (waitpid(m_guardian, &status, 0) < 0 && errno == EINTR) {
    }
    m_guardian = -1;
    m_guardian_status = status;
  }
}

std::optional<Guarded::Report> Guarded::next() {
  while (m_report >= 0) {
    std::int32_t message[2];
    bool eof = false;
    if (!read_report(m_report, message, &eof)) {
      if (eof) {
        ::close(m_report);
        m_report = -1;
      }
      return std::nullopt;
    }
    guardian_event event{};
    if (!guardian_report_decode(message, &event)) {
      continue; // not a report: nothing the guardian writes
    }
    if (event.kind == guardian_stopped) {
      return Report{Report::Kind::stopped, event.value};
    }
    if (event.kind == guardian_exited || event.kind == guardian_exited_last) {
      m_cmd_reported_end = true;
      return Report{Report::Kind::exited, event.value, event.kind == guardian_exited_last};
    }
  }
  return std::nullopt;
}

std::string encode_release_spec(const std::string& owner, const std::vector<std::string>& args,
                                const std::vector<std::string>& env) {
  std::string out;
  auto put = [&out](std::string_view word) {
    out.append(word);
    out.push_back('\0');
  };
  put(k_spec_magic);
  put(owner);
  put(std::to_string(args.size()));
  for (const auto& arg : args) {
    put(arg);
  }
  put(std::to_string(env.size()));
  for (const auto& entry : env) {
    put(entry);
  }
  return out;
}

std::optional<ReleaseSpec> decode_release_spec(std::string_view bytes) {
  std::size_t at = 0;
  auto word = [&]() -> std::optional<std::string> {
    auto end = bytes.find('\0', at);
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    std::string w(bytes.substr(at, end - at));
    at = end + 1;
    return w;
  };
  auto list = [&](std::vector<std::string>& into) {
    auto count = word();
    // Digits as std::to_string writes them: no leading zero (issue 44).
    if (!count || count->empty() || count->size() > 7 ||
        count->find_first_not_of("0123456789") != std::string::npos || (count->size() > 1 && count->front() == '0')) {
      return false;
    }
    for (long i = std::strtol(count->c_str(), nullptr, 10); i > 0; --i) {
      auto w = word();
      if (!w) {
        return false;
      }
      into.push_back(std::move(*w));
    }
    return true;
  };
  ReleaseSpec spec;
  auto magic = word();
  auto owner = word();
  if (!magic || *magic != k_spec_magic || !owner || owner->empty() || !list(spec.args) || !list(spec.env) ||
      spec.args.empty() || at != bytes.size()) {
    return std::nullopt;
  }
  spec.owner = std::move(*owner);
  return spec;
}

namespace {

// The spec encode_release_spec wrote, from its memfd; nothing when it does not parse.
std::optional<ReleaseSpec> read_release_spec(int fd) {
  std::string bytes;
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return std::nullopt;
  }
  char buf[8192];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && bytes.size() < (64U << 20)) {
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  return decode_release_spec(bytes);
}

// RLOCK_GUARDIAN's state when its role is `role` (guardian.h).
std::optional<guardian_state> guardian_state_as(guardian_role role) {
  guardian_state state{};
  if (!guardian_state_decode(std::getenv(GUARDIAN_ENV), &state) || state.role != role) {
    return std::nullopt;
  }
  return state;
}

} // namespace

std::optional<int> guardian_entry(int argc, char** argv) {
  if (argc < 1 || std::strcmp(argv[0], GUARDIAN_NAME) != 0 || !guardian_state_as(guardian_role_guardian)) {
    return std::nullopt;
  }
  return rlock_guardian_main(argc, argv, environ);
}

std::optional<Orphaned> resume_orphaned() {
  auto state = guardian_state_as(guardian_role_orphaned);
  if (!state) {
    return std::nullopt;
  }
  const auto& field = state->field;
  ::unsetenv(GUARDIAN_ENV);
  Orphaned orphaned;
  orphaned.run_pid = static_cast<pid_t>(field[guardian_parent]);
  orphaned.waiting = field[guardian_go] == -1;
  orphaned.killed = field[guardian_kill] != 0 && !orphaned.waiting;
  // The guardian closed GO_FD after the go; the program file and the report
  // pipe are of no use to this image.
  for (long fd : {field[guardian_exe], field[guardian_report]}) {
    if (fd > STDERR_FILENO) {
      ::close(static_cast<int>(fd));
    }
  }
  // Stop first: nothing about it waits on what follows. (Before the go,
  // only the keeper is there: it is stopped too.)
  if (orphaned.killed || orphaned.waiting) {
    kill_tree(getpid());
  }
  if (const long spec = field[guardian_spec]; spec > STDERR_FILENO) {
    orphaned.spec = read_release_spec(static_cast<int>(spec));
    ::close(static_cast<int>(spec));
  }
  return orphaned;
}

} // namespace rlock::run
