#pragma once

// Signals as rlock takes them: blocked, read from a signalfd, never handled
// in signal context; Interrupted for a wait they end.

#include <rlock/core/errors.hpp>

#include <csignal>
#include <initializer_list>

namespace rlock {

// A signal that ended a wait: exits 128+N (130 for SIGINT, 143 for SIGTERM),
// mapped by cli/exit.cpp.
class Interrupted : public Error {
public:
  explicit Interrupted(int signal);
  int signal() const { return m_signal; }

private:
  int m_signal;
};

// Blocks a set of signals in the calling thread (do it before any thread starts,
// so every thread inherits the mask) and receives them synchronously through a
// signalfd that can sit in a poll(2) set. The mask is left blocked on
// destruction: spawned children get a clean mask explicitly.
class SignalFd {
public:
  explicit SignalFd(std::initializer_list<int> signals);
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return m_fd; }
  // The next pending signal number, or 0 when none is pending. Never blocks.
  int take();
  // The signals it takes (all blocked).
  const sigset_t& set() const { return m_set; }

private:
  int m_fd = -1;
  sigset_t m_set{};
};

// The signals that end a wait for a lock and that `run` forwards to its child.
inline constexpr std::initializer_list<int> k_forwarded_signals = {SIGINT,  SIGTERM, SIGHUP,
                                                                  SIGQUIT, SIGUSR1, SIGUSR2};

// The signal `run`'s guardian gets when rlock, its parent, dies
// (PR_SET_PDEATHSIG): SIGRTMIN+1 (run/spawn). rlock itself has none: it is the
// process the caller started.
int parent_death_signal();

// True for a signal that ends a wait for the lock: a forwarded one.
bool ends_wait(int sig);

} // namespace rlock
