#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace rlock::run {

struct ChildSpec {
  std::vector<std::string> argv; // searched in PATH
  bool kill_if_orphaned = true;  // when rlock dies, the guardian kills CMD's tree
};

// rlock ignores SIGPIPE while it supervises (a closed stderr must not kill
// it); CMD gets back the disposition rlock was started with.
void ignore_sigpipe();

// What the guardian reports about CMD (see Guardian).
struct ChildEvent {
  enum class Kind {
    stopped,       // CMD was stopped (Ctrl-Z); value: the signal
    exited,        // CMD ended; value: its waitpid status
    tree_empty,    // after CMD ended: no process of its tree is left
    guardian_gone, // the guardian died (someone killed it): CMD is unwatched
  };
  Kind kind;
  int value = 0;
};

// The guardian: a process between rlock and CMD that keeps every descendant
// of CMD within reach. rlock forks it before it asks for the lock (while rlock
// has one thread). It makes itself a child subreaper, so CMD's orphans (double
// forks, setsid) are reparented to it and never escape, and forks the
// starter, which waits in a process group of its own (pgid = pid) for the
// launch message and then execs CMD with an empty signal mask and the signal
// dispositions rlock was started with (an ignored SIGINT stays ignored, as
// with flock): no fork lies between "acquired" and "CMD runs". The guardian
// reports whether the exec worked, reaps CMD and reports its status, and
// reports when the last process of CMD's tree is gone (and then exits: nothing
// is left to guard). If rlock dies (SIGKILL), the pipe from rlock reads EOF
// and the guardian SIGKILLs the whole tree before exiting.
class Guardian {
public:
  Guardian() = default;
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  // Forks the guardian, which waits for launch(). CMD's environment is rlock's
  // at this point, plus RLOCK_FENCE given to launch(). Throws Error (70) when
  // it cannot. If launch() never comes, the guardian exits with rlock.
  void prepare(const ChildSpec& spec);
  // Tells the guardian to start CMD with RLOCK_FENCE=`fence`, giving CMD's
  // group the terminal's foreground when `take_terminal`; returns once CMD
  // runs. Throws Error with exit code 127 (not found) or 126 (cannot execute)
  // when CMD cannot be started, or 70 when the guardian is gone.
  void launch(long long fence, bool take_terminal);
  pid_t pid() const { return m_pid; }
  // CMD's pid, which is also its process group.
  pid_t child() const { return m_child; }
  // Readable when read_events() has something to return.
  int event_fd() const { return m_report; }
  // What the guardian reported since the last call. Never blocks.
  std::vector<ChildEvent> read_events();
  // Tells the guardian to exit (without touching CMD's tree) and reaps it.
  // Never throws.
  void disarm() noexcept;

private:
  pid_t m_pid = -1;
  pid_t m_child = -1;
  std::string m_command; // argv[0], for messages
  int m_ctl = -1;    // rlock -> guardian: a byte to disarm; EOF when rlock died
  int m_launch = -1; // rlock -> starter: the launch message; EOF: never launched
  int m_report = -1; // guardian -> rlock: reports
  bool m_gone = false;
  bool m_tree_empty = false; // reported: the guardian then exits by itself
};

} // namespace rlock::run
