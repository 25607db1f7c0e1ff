#pragma once

#include <rlock/core/signals.hpp>

#include <chrono>
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

  // The guardian's life after fork_supervisor(): passes SIGINT, SIGTERM,
  // SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCONT taken from `signals` on to
  // the supervisor, waits for it, and returns its exit status. If the
  // supervisor was killed, SIGKILLs what it left (CMD's tree) first and
  // returns 128+N after saying so on stderr. With `shed_later`, once the
  // supervisor has run for k_shed_after, calls shed_memory() (signals that came
  // meanwhile stay pending for the new image).
  int watch(SignalFd& signals, const std::string& label, bool shed_later = false);

  // How long a run lasts before its guardian sheds its memory: the re-exec
  // costs ~0.3 ms (0.6 ms of CPU) here, a tenth of a whole `run -- true`, so a
  // run shorter than this never pays it (≤ 1 % of a longer one), and one that
  // holds its lock for seconds or hours holds ~1 MiB less (bench/README.md,
  // "Start-up budget").
  static constexpr std::chrono::milliseconds k_shed_after{50};

  // The guardian's memory, after fork_supervisor(): it is the process the
  // caller started, so everything rlock touched before the fork (parsing,
  // the trust store, the heap) stays mapped in it while CMD runs, a second
  // copy beside the supervisor's. It needs none of it: this re-executes the
  // same program file (/proc/self/exe, the same command line, an environment
  // of its own that says which process to watch), whose fresh image goes
  // straight to watch() (resume_after_exec). Same pid, process group, child
  // subreaper flag, blocked signals (pending ones stay pending) and children.
  // Returns only if the exec failed; the caller then watches from here.
  // Called by watch() (shed_later) once the run has lasted k_shed_after.
  void shed_memory(const std::string& label);

  // At the start of rlock: when this process is a guardian re-executed by
  // shed_memory() (its environment names a supervisor that is its child),
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
