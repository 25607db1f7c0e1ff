#pragma once

#include <rlock/core/signals.hpp>

#include <string>
#include <sys/types.h>
#include <vector>

namespace rlock::run {

// rlock ignores SIGPIPE while it supervises (a closed stderr must not kill
// it); CMD gets back the disposition rlock was started with.
void ignore_sigpipe();

// `rlock run` is two processes. The one the caller started (its pid is what
// the shell, cron or CI waits for and signals) is the guardian: a child
// subreaper that forks the supervisor and then only passes signals on to it
// and waits for it. The supervisor (shown as rlock-run) takes the lock, starts
// CMD as its own child, renews, and is a child subreaper too, so CMD's
// orphans (double forks, setsid) come to it and it sees when the last of them
// is gone. Nothing can escape either way:
// - the supervisor killed (SIGKILL): CMD's whole tree is reparented to the
//   guardian, which SIGKILLs it and exits 128+N; the lock expires by its lease;
// - the guardian killed: the supervisor gets parent_death_signal(), stops
//   CMD's tree (unless --on-lost ignore), releases the lock and exits.
// The guardian is what lies between CMD's end and rlock's exit, never between
// "acquired" and "CMD runs" or between CMD's end and the release.
class Guardian {
public:
  explicit Guardian(bool kill_if_orphaned) : m_kill_if_orphaned(kill_if_orphaned) {}

  // Forks the supervisor, in a process group of its own (signals meant for
  // the caller's job reach the guardian, which passes each on exactly once).
  // Returns true in the supervisor, false in the guardian. Call while rlock
  // has one thread and holds no connection. Throws Error (70) when it cannot.
  bool fork_supervisor();

  // The guardian's life after fork_supervisor(): passes SIGINT, SIGTERM,
  // SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCONT taken from `signals` on to
  // the supervisor, waits for it, and returns its exit status. If the
  // supervisor was killed, SIGKILLs what it left (CMD's tree) first and
  // returns 128+N after saying so on stderr.
  int watch(SignalFd& signals, const std::string& label);

private:
  bool m_kill_if_orphaned;
  pid_t m_supervisor = -1;
};

// The guardian's process group, from the supervisor: where the terminal goes
// back to after CMD, and what a Ctrl-Z stops along with the supervisor.
pid_t guardian_group();

// CMD before it runs: the supervisor forks the starter while it asks for the
// lock; it waits in a process group of its own (pgid = pid) for launch() and
// then execs CMD (searched in PATH; a script without "#!" runs with /bin/sh)
// with an empty signal mask and the signal dispositions rlock was started
// with (an ignored SIGINT stays ignored, as with flock). No fork lies between
// "acquired" and "CMD runs".
class Starter {
public:
  Starter() = default;
  ~Starter();
  Starter(const Starter&) = delete;
  Starter& operator=(const Starter&) = delete;

  // Forks the starter for `argv`. CMD's environment is the supervisor's at
  // this point plus RLOCK_FENCE given to launch(). Throws Error (70).
  void prepare(const std::vector<std::string>& argv);
  // Starts CMD with RLOCK_FENCE=`fence`, giving its group the terminal's
  // foreground when `take_terminal`; returns CMD's pid (= its process group)
  // once it runs. Throws Error with exit code 127 (not found) or 126 (cannot
  // execute), after reaping the starter.
  pid_t launch(long long fence, bool take_terminal);

private:
  pid_t m_pid = -1;
  int m_launch = -1;     // supervisor -> starter: the launch message; EOF: never launched
  int m_exec_error = -1; // starter -> supervisor: exec's errno; EOF: exec worked
  std::string m_command; // argv[0], for messages
};

} // namespace rlock::run
