#pragma once

#include <rlock/core/signals.hpp>

#include <optional>
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
// "acquired" and "CMD runs" or between CMD's end and the release (measured in
// bench/: a process between the supervisor and CMD cost 0.3 ms of handover).
class Guardian {
public:
  explicit Guardian(bool kill_if_orphaned) : m_kill_if_orphaned(kill_if_orphaned) {}

  // Forks the supervisor, in a process group of its own (signals meant for
  // the caller's job reach the guardian, which passes each on exactly once).
  // Returns true in the supervisor, false in the guardian. Call while rlock
  // has one thread and holds no connection. Throws Error (70) when it cannot.
  bool fork_supervisor();

  // The guardian's life after fork_supervisor(), in rlock's own image: passes
  // SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCONT taken from
  // `signals` on to the supervisor, waits for it, and returns its exit status.
  // If the supervisor was killed, SIGKILLs what it left (CMD's tree) first and
  // returns 128+N after saying so on stderr.
  int watch(SignalFd& signals, const std::string& label);

  // Right after fork_supervisor(), the guardian becomes a small program that
  // does what watch() does on its common path (src/guardian/guardian.c,
  // embedded in rlock, executed from a memfd): it is the process the caller
  // started, and in rlock's image it would hold a second copy of everything
  // rlock touched before the fork (mapped text, heap, trust store, the
  // environment with its password) for as long as CMD runs. Same pid, process
  // group, command line, name, child subreaper flag, blocked and pending
  // signals, and children. When the supervisor was killed, the small program
  // executes rlock again (an fd on this program file, kept open across the
  // exec) and resume_after_exec() finishes the job in watch(). Returns only if
  // the exec could not be done (no small image for this machine, no memfd):
  // the caller then watches from here.
  void become_small(const SignalFd& signals, const std::string& label);

  // At the start of rlock: when this process is a guardian whose small image
  // handed over (its environment names a supervisor that is its child),
  // watches it and returns the exit status; otherwise nothing.
  static std::optional<int> resume_after_exec();

private:
  bool m_kill_if_orphaned;
  pid_t m_supervisor = -1;
};

// The guardian's process group, from the supervisor: where the terminal goes
// back to after CMD, and what a Ctrl-Z stops along with the supervisor.
pid_t guardian_group();

// Starts CMD (searched in PATH; a script without "#!" runs with /bin/sh, as
// execvp does) as a child of the calling process, with posix_spawn: in a
// process group of its own (pgid = pid), with an empty signal mask and the
// signal dispositions rlock was started with (an ignored SIGINT stays
// ignored, as with flock), and the foreground of the terminal when
// `take_terminal`. Returns its pid, or throws Error with exit code 127 (not
// found) or 126 (cannot execute).
pid_t spawn_cmd(const std::vector<std::string>& argv, bool take_terminal);

} // namespace rlock::run
