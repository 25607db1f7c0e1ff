#include <rlock/core/proc.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

} // namespace rlock
