#pragma once

// CMD under its guardian (Guarded), the release spec a killed run leaves, and
// the entry points of the guardian and of an orphaned rlock.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace rlock::run {

// rlock ignores SIGPIPE while it supervises (a closed stderr must not kill
// it); CMD gets back the disposition rlock was started with.
void ignore_sigpipe();

// CMD, started under its guardian.
//
// `rlock run` is the process the caller started (its pid is what the shell,
// cron or CI waits for and signals): it takes the lock, renews it, passes
// signals on to CMD's tree and releases. CMD is not its child but the
// guardian's (src/guardian/guardian.c): a small program, executed from a
// memfd (16 KiB resident, no copy of rlock), which is a child subreaper, so
// every descendant of CMD (double forks, setsid) stays below it. It reports
// CMD's pid, stops and end over a pipe, reaps the rest, and exits once
// nothing of the tree is left. Nothing can escape either way:
// - rlock killed (SIGKILL): the guardian's parent-death signal wakes it; it
//   executes rlock again (resume_orphaned), which kills CMD's tree and
//   releases the lock, from what `release_spec` says (before go(), nothing
//   was taken on its behalf: it only exits);
// - the guardian killed: CMD's tree is reparented to rlock (a child
//   subreaper too), which stops it (StopPlan::orphaned) and releases.
// Where the small image cannot be executed (no memfd exec, another machine),
// rlock's own program file runs the same code (guardian_entry).
class Guarded {
public:
  struct Options {
    bool kill_if_orphaned = true; // false: --on-lost ignore
    // What rlock, executed again after its death, needs to release the lock
    // (encode_release_spec); empty: CMD runs without one.
    std::string release_spec;
  };

  // Starts the guardian before the lock is requested: it waits for go().
  // Throws Error (70) when it cannot. Its end without go() (busy, skipped,
  // an error) ends the guardian, which started nothing. Call from the main
  // thread: the guardian's parent-death signal is about that thread's end.
  static Guarded prepare(const std::vector<std::string>& argv, const Options& options);

  // The lock is taken (`locked`; false: --if-unavailable run): the guardian
  // starts CMD (searched in PATH; a script without "#!" runs with /bin/sh, as
  // execvp does) in a process group of its own, with this process's
  // environment as it is now, an empty signal mask, the dispositions rlock
  // was started with, and the terminal's foreground when `take_terminal`.
  // Returns once CMD runs. Throws Error with 127 (not found), 126 (cannot
  // execute) or 70 (no guardian).
  void go(bool take_terminal, bool locked);

  Guarded(Guarded&& other) noexcept;
  Guarded& operator=(Guarded&&) = delete;
  Guarded(const Guarded&) = delete;
  ~Guarded();

  pid_t cmd() const { return m_cmd; }
  // The process every live part of CMD's tree descends from: the guardian
  // while it lives, this process after (its orphans come here).
  pid_t tree_root() const;
  // Readable when the guardian has something to report; -1 once it ended.
  int report_fd() const { return m_report; }

  // For each child the caller reaped: true when it was the guardian.
  bool reaped(pid_t pid, int wait_status);
  // The guardian ended without reporting CMD's end (killed): its wait status,
  // once all it reported has been read.
  std::optional<int> lost_guardian() const;
  // The guardian, still there, is killed (CMD's tree goes on, reparented to
  // this process): before rlock releases while the tree may go on (--on-lost
  // ignore), so that nothing releases again after rlock's end.
  void disown();

  struct Report {
    enum class Kind { stopped, exited } kind;
    int status = 0;    // CMD's wait status
    bool last = false; // exited: nothing of CMD's tree is left
  };
  // The next thing the guardian reported, without waiting.
  std::optional<Report> next();

private:
  struct Spawn;
  Guarded() = default;
  std::unique_ptr<Spawn> m_spawn;
  pid_t m_guardian = -1;
  pid_t m_keeper = -1; // the guardian's child, CMD's parent (guardian.h)
  pid_t m_cmd = -1;
  int m_report = -1;
  int m_go = -1;
  bool m_cmd_reported_end = false;
  std::optional<int> m_guardian_status;
};

// What `rlock run` executed again after its death reads to release the lock
// it held: the owner token, the command line it was started with (passwords
// included) and its environment then. Kept in a sealed memfd that only the
// guardian holds (like rlock's memory, readable by the same user and root
// only), never in an environment or a command line.
std::string encode_release_spec(const std::string& owner, const std::vector<std::string>& args,
                                const std::vector<std::string>& env);

struct ReleaseSpec {
  std::string owner;
  std::vector<std::string> args;
  std::vector<std::string> env;
};
// What encode_release_spec wrote; nothing when the bytes are not exactly that.
std::optional<ReleaseSpec> decode_release_spec(std::string_view bytes);

// At the start of rlock, for the guardian: when this process is to be the
// guardian (the small image could not be executed), runs it and returns its
// exit status.
std::optional<int> guardian_entry(int argc, char** argv);

// At the start of rlock: when this process is the guardian of a `rlock run`
// that died (the guardian, or its keeper, executed rlock again), kills CMD's
// tree (unless --on-lost ignore) and returns what is needed to release the
// lock (the spec is empty when the run held none), or, when the run died
// before its go (`waiting`), to leave the queue it may be in.
struct Orphaned {
  pid_t run_pid = 0; // the `rlock run` that died
  bool killed = false; // CMD's tree was killed
  bool waiting = false; // it died before its go: nothing was started, and it may be queued
  std::optional<ReleaseSpec> spec;
};
std::optional<Orphaned> resume_orphaned();

} // namespace rlock::run
