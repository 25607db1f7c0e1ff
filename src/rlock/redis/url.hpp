#pragma once

#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::redis {

// A host and port of a TCP server.
struct HostPort {
  std::string host;
  int port = 0;
  bool operator==(const HostPort&) const = default;
};

// Where a Redis server is and how to log in. Parsed from a URL. A Sentinel URL
// (non-empty `sentinels`) names the sentinels and the master's name instead of
// the server: redis::Client asks the sentinels for the primary and connects to
// it with this endpoint's user, password and db.
struct Endpoint {
  enum class Transport { tcp, unix_socket };
  Transport transport = Transport::tcp;
  std::string host = "127.0.0.1"; // tcp
  int port = 6379;                // tcp
  std::string path;               // unix socket
  std::string user;               // ACL user; empty = default
  std::optional<std::string> password;
  int db = 0;
  std::vector<HostPort> sentinels; // redis-sentinel://h1:p1,h2:p2/MASTER
  std::string master;              // the master's name known to the sentinels

  bool is_sentinel() const { return !sentinels.empty(); }
  // The same login and db on another server (a cluster node, the primary a
  // sentinel named).
  Endpoint at(const HostPort& node) const;
  HostPort host_port() const { return {host, port}; }

  // "redis://user@host:port/db", "unix:///path?db=N" or
  // "redis-sentinel://user@h1:p1,h2:p2/MASTER/db", never the password.
  std::string display() const;
};

inline constexpr std::string_view k_default_url = "redis://127.0.0.1:6379";

// Parses redis://[[user]:password@]host[:port][/db] (IPv6 as [::1]),
// unix:///path[?db=N] and
// redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[/db]
// (sentinel port 26379 by default; the login and db are the primary's). User
// and password are percent-decoded. Throws UsageError for a malformed URL, and
// a "not supported yet" UsageError for rediss://.
Endpoint parse_url(std::string_view url);

// Where the password of a URL's userinfo is in `text` ("redis://u:PW@h"):
// offset and length, or nothing when it has none.
std::optional<std::pair<std::size_t, std::size_t>> password_span(std::string_view url);

// `url` as the user wrote it, without the password of its userinfo
// ("redis://u:pw@h/1" -> "redis://u@h/1", "redis://:pw@h" -> "redis://h"): for
// handing the URL on (to CMD, to a record) without the secret.
std::string without_password(std::string_view url);

// The URL list to use: the --url flags if any, else RLOCK_URL (comma-separated:
// a comma starts a new URL only where a scheme follows, so a Sentinel URL's
// host list stays whole), else REDIS_URL, else the default. `env` looks a variable up (nullptr = unset).
std::vector<std::string> choose_urls(const std::vector<std::string>& flags,
                                     const char* (*env)(const char*));

} // namespace rlock::redis
