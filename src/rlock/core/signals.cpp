// Signals read synchronously through a signalfd (blocked in every thread),
// and Interrupted, the error of a wait a signal ended.

#include <rlock/core/signals.hpp>

#include <fmt/format.h>

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rlock {

int parent_death_signal() {
  return SIGRTMIN + 1;
}

bool ends_wait(int sig) {
  for (int ending : k_forwarded_signals) {
    if (sig == ending) {
      return true;
    }
  }
  return false;
}

namespace {

std::string interruption(int signal) {
  return fmt::format("interrupted by SIG{}", sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
}

} // namespace

Interrupted::Interrupted(int signal)
    : Error(Outcome::interrupted, interruption(signal)),
      m_signal(signal) {}

SignalFd::SignalFd(std::initializer_list<int> signals) {
  sigemptyset(&m_set);
  for (int sig : signals) {
    sigaddset(&m_set, sig);
  }
  pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
  m_fd = signalfd(-1, &m_set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (m_fd < 0) {
    throw Error(Outcome::failed, fmt::format("signalfd: {}", std::strerror(errno)));
  }
}

SignalFd::~SignalFd() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

int SignalFd::take() {
  signalfd_siginfo info{};
  for (;;) {
    ssize_t n = ::read(m_fd, &info, sizeof info);
    if (n == static_cast<ssize_t>(sizeof info)) {
      return static_cast<int>(info.ssi_signo);
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    return 0;
  }
}

} // namespace rlock
