// Reads of /proc (a process's stat and command line, the boot id) that never
// throw: processes vanish between a listing and a read.

#include <rlock/core/proc.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

namespace rlock {

std::string read_proc(pid_t pid, const char* what, std::size_t limit) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), what);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {};
  }
  std::string text;
  char buf[1024];
  while (text.size() < limit) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (text.size() > limit) {
    text.resize(limit);
  }
  return text;
}

std::optional<ProcessStart> parse_process_start(std::string_view stat) {
  auto open = stat.find('(');
  auto close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      close + 2 >= stat.size()) {
    return std::nullopt;
  }
  ProcessStart out;
  out.state = stat[close + 2];
  // Fields after comm: 3 state, 4 ppid, ... 22 starttime: 19 more spaces to skip.
  std::size_t at = close + 2;
  for (int field = 3; field < 22; ++field) {
    at = stat.find(' ', at);
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
    ++at;
    if (field == 3) {
      auto end = stat.find(' ', at);
      auto digits = stat.substr(at, end == std::string_view::npos ? 0 : end - at);
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.parent);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || out.parent < 0) {
        return std::nullopt;
      }
    }
  }
  auto end = stat.find(' ', at);
  auto digits = stat.substr(at, end == std::string_view::npos ? stat.size() - at : end - at);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.start_ticks);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || out.start_ticks < 0) {
    return std::nullopt;
  }
  return out;
}

std::optional<ProcessStart> process_start(pid_t pid) {
  if (pid <= 0) {
    return std::nullopt;
  }
  return parse_process_start(read_proc(pid, "stat"));
}

std::string boot_id() {
  char path[] = "/proc/sys/kernel/random/boot_id";
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {};
  }
  char buf[64];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

} // namespace rlock
