#pragma once

#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rlock::run {

struct ChildSpec {
  std::vector<std::string> argv; // searched in PATH
  bool die_with_parent = true;   // PR_SET_PDEATHSIG(SIGKILL)
  bool take_terminal = false;    // make the child's group the terminal's foreground
};

// rlock ignores SIGPIPE while it supervises (a closed stderr must not kill
// it); the child gets back the disposition rlock was started with.
void ignore_sigpipe();

// Starts CMD in a process group of its own (pgid = pid) with an empty signal
// mask and the signal dispositions rlock was started with (an ignored SIGINT
// stays ignored, as with flock). Returns the pid, or throws Error with exit
// code 127 (not found) or 126 (cannot execute) when exec fails.
pid_t spawn_child(const ChildSpec& spec);

// The exit status rlock passes on for a waitpid status: the exit code, or
// 128+N for death by signal N (as flock(1) does).
int exit_status_of(int wait_status);

// Sends `sig` to the child's process group and to every other descendant of
// this process (rlock is a child subreaper, so descendants that left the group
// with setsid are still found), except `spare` (the guardian).
void signal_tree(pid_t pgid, int sig, pid_t spare);

// True when any process of the child's tree is still alive (zombies excluded).
bool tree_alive(pid_t pgid, pid_t spare);

// A watcher process that SIGKILLs the child's process group if rlock dies
// without disarming it (rlock killed with SIGKILL). Blocks every signal it can.
class Guardian {
public:
  Guardian() = default;
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  // Starts the guardian for the child's process group `pgid`.
  void start(pid_t pgid);
  // Tells the guardian all is well and waits for it to exit. Never throws.
  void disarm() noexcept;
  pid_t pid() const { return m_pid; }

  // What the guardian process reads: set before it starts, never changed.
  struct Watch {
    int read_fd;
    pid_t pgid;
  };

private:
  pid_t m_pid = -1;
  int m_fd = -1;
  Watch m_watch{-1, -1};
  std::unique_ptr<char[]> m_stack;
};

} // namespace rlock::run
