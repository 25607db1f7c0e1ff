#pragma once

#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::redis {

// Where a Redis server is and how to log in. Parsed from a URL; never holds
// anything that a later transport (TLS, Sentinel) cannot add as a field.
struct Endpoint {
  enum class Transport { tcp, unix_socket };
  Transport transport = Transport::tcp;
  std::string host = "127.0.0.1"; // tcp
  int port = 6379;                // tcp
  std::string path;               // unix socket
  std::string user;               // ACL user; empty = default
  std::optional<std::string> password;
  int db = 0;

  // "redis://user@host:port/db" or "unix:///path?db=N", never the password.
  std::string display() const;
};

inline constexpr std::string_view k_default_url = "redis://127.0.0.1:6379";

// Parses redis://[[user]:password@]host[:port][/db] (IPv6 as [::1]) and
// unix:///path[?db=N]. User and password are percent-decoded. Throws UsageError
// for a malformed URL, and a "not supported yet" UsageError for rediss:// and
// redis-sentinel://.
Endpoint parse_url(std::string_view url);

// Where the password of a URL's userinfo is in `text` ("redis://u:PW@h"):
// offset and length, or nothing when it has none.
std::optional<std::pair<std::size_t, std::size_t>> password_span(std::string_view url);

// `url` as the user wrote it, without the password of its userinfo
// ("redis://u:pw@h/1" -> "redis://u@h/1", "redis://:pw@h" -> "redis://h"): for
// handing the URL on (to CMD, to a record) without the secret.
std::string without_password(std::string_view url);

// The URL list to use: the --url flags if any, else RLOCK_URL (comma-separated),
// else REDIS_URL, else the default. `env` looks a variable up (nullptr = unset).
std::vector<std::string> choose_urls(const std::vector<std::string>& flags,
                                     const char* (*env)(const char*));

} // namespace rlock::redis
