// CMD's process tree from /proc: its descendants, signalling all of them, and
// killing them until none is left.

#include <rlock/core/errors.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/tree.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <map>

namespace rlock::run {

namespace {

struct Entry {
  pid_t ppid = 0;
  std::string name;
};

// Every live process's parent and name, from /proc/<pid>/stat.
std::map<pid_t, Entry> process_table() {
  std::map<pid_t, Entry> table;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) {
    return table;
  }
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    std::string stat = read_proc(static_cast<pid_t>(pid), "stat");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    auto open = stat.find('(');
    auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open || close + 4 >= stat.size()) {
      continue;
    }
    char state = stat[close + 2];
    if (state == 'Z' || state == 'X') {
      continue;
    }
    table[static_cast<pid_t>(pid)] = {static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10)),
                                      stat.substr(open + 1, close - open - 1)};
  }
  closedir(dir);
  return table;
}

} // namespace

std::vector<Process> descendants(pid_t root) {
  auto table = process_table();
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, entry] : table) {
    children.emplace(entry.ppid, pid);
  }
  std::vector<Process> found;
  std::vector<pid_t> parents{root};
  for (std::size_t i = 0; i < parents.size(); ++i) {
    auto [from, to] = children.equal_range(parents[i]);
    for (auto it = from; it != to; ++it) {
      parents.push_back(it->second);
      found.push_back({it->second, table[it->second].name});
    }
  }
  return found;
}

std::vector<Process> signal_tree(pid_t root, pid_t pgid, int sig) {
  auto tree = descendants(root);
  if (pgid > 0) {
    killpg(pgid, sig);
  }
  for (const auto& process : tree) {
    // The group got it from killpg: a second copy of e.g. SIGUSR1 would be
    // delivered twice.
    if (pgid <= 0 || getpgid(process.pid) != pgid) {
      kill(process.pid, sig);
    }
  }
  return tree;
}

void kill_tree(pid_t root) {
  constexpr int k_max_looks = 50;
  for (int look = 0; look < k_max_looks; ++look) {
    auto alive = descendants(root);
    if (alive.empty()) {
      return;
    }
    for (const auto& process : alive) {
      kill(process.pid, SIGKILL);
    }
    // Our own children become zombies, not gone: reap what we can. Give the
    // killed a moment to die before looking again.
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    usleep(static_cast<useconds_t>(200 * (look + 1)));
  }
}

std::string describe(const std::vector<Process>& processes, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < processes.size() && i < limit; ++i) {
    out += fmt::format("{}{} (pid {})", i ? ", " : "", printable(processes[i].name), processes[i].pid);
  }
  if (processes.size() > limit) {
    out += fmt::format(" and {} more", processes.size() - limit);
  }
  return out;
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

} // namespace rlock::run
