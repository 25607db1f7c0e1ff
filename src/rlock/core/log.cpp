// stderr through a sink that never blocks: text that cannot be written now is
// kept (64 KiB at most) and written later, so nothing waits on a full pipe.

#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <ctime>
#include <mutex>
#include <string>

namespace rlock::log {

namespace {

constexpr std::size_t k_max_pending = 64 * 1024;

// How rlock reaches stderr without blocking on it.
enum class Sink {
  unknown, // not looked at yet (opened on the first message)
  none,    // stderr is closed: messages are dropped
  own_fd,  // a non-blocking open file description of the same pipe/terminal
  file,    // a regular file: writes do not wait for a reader
  socket,  // send(MSG_DONTWAIT) on fd 2
  poll_fd, // fd 2 when it cannot be reopened: written only when poll says so
};

struct State {
  std::mutex mutex;
  Sink sink = Sink::unknown;
  int fd = -1;
  std::string pending;
  std::size_t dropped = 0;
};

State& state() {
  static State s;
  return s;
}

void open_sink(State& s) {
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) {
    s.sink = Sink::none;
    return;
  }
  s.fd = STDERR_FILENO;
  if (S_ISREG(st.st_mode)) {
    s.sink = Sink::file;
    return;
  }
  if (S_ISSOCK(st.st_mode)) {
    s.sink = Sink::socket;
    return;
  }
  // Setting O_NONBLOCK on fd 2 itself would change CMD's stderr too (they
  // share the open file description); opening the pipe or terminal again
  // gives rlock a description of its own.
  int fd = ::open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0) {
    s.fd = fd;
    s.sink = Sink::own_fd;
    return;
  }
  s.sink = Sink::poll_fd;
}

// Writes as much of s.pending as the sink takes now. Returns false when the
// sink would block.
bool drain(State& s) {
  while (!s.pending.empty()) {
    ssize_t n = -1;
    switch (s.sink) {
    case Sink::socket:
      n = ::send(s.fd, s.pending.data(), s.pending.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      break;
    case Sink::poll_fd: {
      pollfd pfd{s.fd, POLLOUT, 0};
      if (::poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLOUT) == 0) {
        return false;
      }
      // At most PIPE_BUF: a pipe with room for one page takes it without waiting.
      n = ::write(s.fd, s.pending.data(), std::min<std::size_t>(s.pending.size(), PIPE_BUF));
      break;
    }
    case Sink::own_fd:
    case Sink::file:
      n = ::write(s.fd, s.pending.data(), s.pending.size());
      break;
    default:
      s.pending.clear();
      return true;
    }
    if (n > 0) {
      s.pending.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return false;
    } else {
      s.pending.clear(); // closed or broken: nothing will ever read it
      return true;
    }
  }
  return true;
}

} // namespace

std::string debug_stamp(long long epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  if (localtime_r(&seconds, &tm) == nullptr) {
    return fmt::format("@{}", epoch_ms);
  }
  return fmt::format("{:02}:{:02}:{:02}.{:03}", tm.tm_hour, tm.tm_min, tm.tm_sec, epoch_ms % 1000);
}

void write(std::string_view text) noexcept {
  try {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (s.sink == Sink::unknown) {
      open_sink(s);
    }
    if (s.sink == Sink::none) {
      return;
    }
    if (s.pending.size() + text.size() > k_max_pending) {
      s.dropped += text.size();
    } else {
      s.pending.append(text);
    }
    drain(s);
  } catch (...) {
    // Out of memory while logging: the message is lost, nothing else.
  }
}

void flush(std::chrono::milliseconds limit) noexcept {
  auto& s = state();
  const TimePoint deadline = Clock::now() + limit;
  for (;;) {
    int fd = -1;
    {
      std::lock_guard lock(s.mutex);
      if (s.dropped > 0) {
        try {
          s.pending += fmt::format("rlock: warning: {} bytes of messages were dropped: stderr was blocked\n",
                                   s.dropped);
        } catch (...) {
        }
        s.dropped = 0;
      }
      if (s.sink == Sink::unknown || s.sink == Sink::none || drain(s)) {
        return;
      }
      fd = s.fd;
    }
    int left = poll_timeout_ms(deadline);
    if (left <= 0) {
      return;
    }
    pollfd pfd{fd, POLLOUT, 0};
    ::poll(&pfd, 1, left);
  }
}

} // namespace rlock::log
