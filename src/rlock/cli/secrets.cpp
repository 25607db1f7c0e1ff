// Passwords: resolved from the URL, a file or the environment, redacted from
// URLs, scrubbed from argv, and what is recorded of a command line.

#include <rlock/cli/secrets.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rlock::cli {

namespace {

// The first line of a password file. A directory, an unreadable or an empty
// file is a usage error: sending an empty AUTH would only fail later, less
// clearly.
std::string read_password_file(const std::string& path) {
  auto fail = [&](std::string_view why) {
    return UsageError(fmt::format("--password-file: {}: {}", printable(path), why));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw fail(fmt::format("cannot read it: {}", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw fail("is a directory; give the file that holds the password");
  }
  // As ssh does with private keys: a password others may read is not a secret.
  if (S_ISREG(st.st_mode) && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    ::close(fd);
    throw fail(fmt::format("is open to group or others (mode {:04o}); make it private: chmod 600 {}",
                           st.st_mode & 07777, printable(path)));
  }
  std::string text;
  char buf[512];
  ssize_t n;
  while (text.find('\n') == std::string::npos && text.size() < 64 * 1024 &&
         ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))) {
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') {
    text.pop_back();
  }
  if (text.empty()) {
    throw fail("is empty; its first line must be the password");
  }
  return text;
}

bool mentions_secret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (std::string_view word : {"PASS", "AUTH", "SECRET", "TOKEN"}) {
    if (upper.find(word) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string redact_word(std::string_view word, bool after_password_flag) {
  if (after_password_flag) {
    return "***";
  }
  std::string out(word);
  if (auto span = redis::password_span(out)) {
    out.replace(span->first, span->second, "***");
  }
  auto eq = out.find('=');
  if (eq != std::string::npos && eq > 0 && out.find("://") > eq && mentions_secret(out.substr(0, eq))) {
    out = out.substr(0, eq + 1) + "***";
  }
  return out;
}

} // namespace

namespace {

redis::Endpoint resolve_url(const GlobalOptions& global, const std::string& url) {
  auto endpoint = redis::parse_url(url);
  if (!endpoint.password) {
    if (global.password_file) {
      endpoint.password = read_password_file(*global.password_file);
    } else if (const char* pw = std::getenv("RLOCK_PASSWORD"); pw != nullptr && *pw != '\0') {
      endpoint.password = pw;
    } else if (const char* cli_pw = std::getenv("REDISCLI_AUTH"); cli_pw != nullptr && *cli_pw != '\0') {
      endpoint.password = cli_pw;
    }
  }
  return endpoint;
}

} // namespace

redis::Endpoint resolve_endpoint(const GlobalOptions& global) {
  return resolve_url(global, global.urls.front());
}

std::vector<redis::Endpoint> resolve_endpoints(const GlobalOptions& global) {
  std::vector<redis::Endpoint> endpoints;
  for (const auto& url : global.urls) {
    endpoints.push_back(resolve_url(global, url));
  }
  return endpoints;
}

namespace {

// The flags after which redis-cli and friends take a password.
bool is_password_flag(std::string_view word) {
  return word == "-a" || word == "--pass" || word == "--password" || word == "--auth";
}

} // namespace

std::string redact_command_line(std::string_view command) {
  std::string out;
  bool after_flag = false;
  std::size_t pos = 0;
  while (pos <= command.size()) {
    auto space = std::min(command.find(' ', pos), command.size());
    std::string_view word = command.substr(pos, space - pos);
    out += redact_word(word, after_flag && !word.empty());
    after_flag = is_password_flag(word);
    if (space < command.size()) {
      out += ' ';
    }
    pos = space + 1;
  }
  return out;
}

std::string recorded_command_line(const std::vector<std::string>& argv, bool with_args, std::size_t max_bytes) {
  // Each argument masked first as a whole, then word by word (issue 44:
  // joined and only then cut at spaces, `-a 'two words'` kept "words",
  // `PASSWORD='a b'` kept "b", and a URL password with a space kept part of
  // it); word by word still finds what a shell script given as one argument
  // holds (sh -c '... -a PW ...').
  std::string text;
  bool after_flag = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    text += i == 0 ? "" : " ";
    if (i > 0 && (!with_args || after_flag)) {
      text += "***";
    } else {
      text += redact_command_line(redact_word(arg, false));
    }
    auto last_space = arg.rfind(' ');
    after_flag = is_password_flag(last_space == std::string::npos ? arg : arg.substr(last_space + 1));
  }
  return text.size() > max_bytes ? text.substr(0, max_bytes) + "..." : text;
}

void scrub_argv(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (auto span = redis::password_span(argv[i])) {
      std::memset(argv[i] + span->first, '*', span->second);
    }
  }
}

} // namespace rlock::cli
