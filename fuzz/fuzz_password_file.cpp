// The password file (cli/secrets: --password-file, RLOCK_PASSWORD_FILE): the
// input is the file's bytes, written to a private file that resolve_endpoint
// reads. Its first line is the password (CR LF or LF; at most 64 KiB read),
// or a UsageError (an empty first line); then what is recorded of a command
// line holding it never shows it.

#include "fuzz.hpp"

#include <rlock/cli/options.hpp>
#include <rlock/cli/secrets.hpp>

#include <fcntl.h>
#include <unistd.h>

using namespace rlock;

namespace {

std::string file_path() {
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/rlock-fuzz-password." +
                     std::to_string(::getpid());
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = file_path();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::write(fd, data, size) == static_cast<ssize_t>(size));
  ::close(fd);
  cli::GlobalOptions global;
  global.urls = {"redis://127.0.0.1:6379"};
  global.password_file = path;
  std::string_view text = fuzz::bytes(data, size);
  redis::Endpoint endpoint;
  try {
    endpoint = cli::resolve_endpoint(global);
  } catch (const UsageError&) {
    auto line = text.substr(0, text.find('\n'));
    FUZZ_CHECK(line.empty() || line == "\r");
    return 0;
  }
  FUZZ_CHECK(endpoint.password && !endpoint.password->empty());
  const std::string& password = *endpoint.password;
  FUZZ_CHECK(text.starts_with(password) && password.find('\n') == std::string::npos);
  // On a command line recorded with its arguments: never the password.
  std::string recorded = cli::recorded_command_line({"redis-cli", "-a", password, "PING"}, true, 1 << 20);
  FUZZ_CHECK(recorded.find("-a ***") != std::string::npos);
  return 0;
}
