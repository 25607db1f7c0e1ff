// URLs -> Endpoints (standalone, Cluster seeds, Sentinel, unix, TLS), the
// choice of URLs, host name resolution, and which server a URL names.

#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/url.hpp>

#include <fmt/format.h>

#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

namespace rlock::redis {

namespace {

UsageError bad_url(std::string_view url, std::string_view why) {
  // The URL may hold a password: show only its scheme and host part.
  std::string shown(url);
  if (auto at = shown.rfind('@'); at != std::string::npos) {
    auto scheme_end = shown.find("://");
    shown =
        shown.substr(0, scheme_end == std::string::npos ? 0 : scheme_end + 3) + "***@" + shown.substr(at + 1);
  }
  return UsageError(fmt::format("--url: {} in '{}'", why, printable(shown)));
}

int parse_int(std::string_view text, int low, int high) {
  int value = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < low || value > high) {
    return -1;
  }
  return value;
}

std::string percent_decode(std::string_view text, std::string_view url) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) {
        throw bad_url(url, "bad percent escape");
      }
      int value = 0;
      auto [ptr, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec != std::errc() || ptr != text.data() + i + 3) {
        throw bad_url(url, "bad percent escape");
      }
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

int parse_db(std::string_view text, std::string_view url) {
  int db = parse_int(text, 0, 1'000'000);
  if (db < 0) {
    throw bad_url(url, fmt::format("bad database number '{}'", printable(text)));
  }
  return db;
}

Endpoint parse_unix(std::string_view rest, std::string_view url) {
  Endpoint ep;
  ep.transport = Endpoint::Transport::unix_socket;
  auto query = rest.find('?');
  ep.path = std::string(rest.substr(0, query));
  if (ep.path.empty() || ep.path.front() != '/') {
    throw bad_url(url, "unix socket path must be absolute (unix:///path/redis.sock)");
  }
  if (query != std::string_view::npos) {
    std::string_view q = rest.substr(query + 1);
    if (!q.starts_with("db=")) {
      throw bad_url(url, "only ?db=N is understood after a socket path");
    }
    ep.db = parse_db(q.substr(3), url);
  }
  return ep;
}

// host[:port], [v6][:port]
HostPort parse_host_port(std::string_view authority, int default_port, std::string_view url) {
  HostPort node{"", default_port};
  std::string_view port_text;
  if (authority.starts_with('[')) {
    auto close = authority.find(']');
    if (close == std::string_view::npos) {
      throw bad_url(url, "unclosed '[' in IPv6 address");
    }
    node.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        throw bad_url(url, "expected ':port' after IPv6 address");
      }
      port_text = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    node.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
    }
  }
  if (node.host.empty()) {
    throw bad_url(url, "missing host");
  }
  if (!port_text.empty() || authority.ends_with(':')) {
    node.port = parse_int(port_text, 1, 65535);
    if (node.port < 0) {
      throw bad_url(url, fmt::format("bad port '{}'", printable(port_text)));
    }
  }
  return node;
}

// Splits "[userinfo@]authority" and fills the endpoint's login from userinfo.
std::string_view take_userinfo(std::string_view authority, Endpoint& ep, std::string_view url) {
  auto at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return authority;
  }
  std::string_view userinfo = authority.substr(0, at);
  auto colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    // redis://user@host: a user without a password (password from elsewhere).
    ep.user = percent_decode(userinfo, url);
  } else {
    ep.user = percent_decode(userinfo.substr(0, colon), url);
    ep.password = percent_decode(userinfo.substr(colon + 1), url);
  }
  return authority.substr(at + 1);
}

Endpoint parse_tcp(std::string_view rest, std::string_view url) {
  Endpoint ep;
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    ep.db = parse_db(rest.substr(slash + 1), url);
  }
  authority = take_userinfo(authority, ep, url);
  if (authority.find(',') != std::string_view::npos) {
    throw bad_url(url, "one URL names one server; for a Redlock over several masters give several URLs "
                       "(-u URL -u URL, or RLOCK_URL=URL,URL); for a Redis Cluster's nodes, "
                       "redis-cluster://HOST:PORT,HOST:PORT");
  }
  auto node = parse_host_port(authority, 6379, url);
  ep.host = node.host;
  ep.port = node.port;
  return ep;
}

// h1[:p1][,h2[:p2]...]: a Sentinel's or a Cluster's host list (at least one).
std::vector<HostPort> parse_host_list(std::string_view authority, int default_port, std::string_view url) {
  std::vector<HostPort> out;
  while (!authority.empty() || out.empty()) {
    auto comma = authority.find(',');
    out.push_back(parse_host_port(authority.substr(0, comma), default_port, url));
    authority = comma == std::string_view::npos ? std::string_view{} : authority.substr(comma + 1);
    if (comma != std::string_view::npos && authority.empty()) {
      throw bad_url(url, "missing host after ','");
    }
  }
  return out;
}

// "[userinfo@]h1[:p1][,h2[:p2]...][/PATH]" of a Sentinel or Cluster URL: the
// login into `ep`, the hosts returned, PATH (without its '/') into `path`.
std::vector<HostPort> take_hosts(std::string_view rest, int default_port, std::string_view url, Endpoint& ep,
                                 std::string_view& path) {
  auto slash = rest.find('/');
  path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  return parse_host_list(take_userinfo(rest.substr(0, slash), ep, url), default_port, url);
}

// redis-sentinel://[userinfo@]h1[:p1][,h2[:p2]...]/MASTER[/db]
Endpoint parse_sentinel(std::string_view rest, std::string_view url) {
  Endpoint ep;
  std::string_view path;
  ep.sentinels = take_hosts(rest, 26379, url, ep, path);
  auto db_slash = path.find('/');
  ep.master = percent_decode(path.substr(0, db_slash), url);
  if (ep.master.empty()) {
    throw bad_url(url, "missing master name (redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB])");
  }
  if (db_slash != std::string_view::npos && db_slash + 1 < path.size()) {
    ep.db = parse_db(path.substr(db_slash + 1), url);
  }
  ep.host = ep.sentinels.front().host; // replaced by the primary's once resolved
  ep.port = ep.sentinels.front().port;
  return ep;
}

// redis-cluster://[userinfo@]h1[:p1][,h2[:p2]...][/0]
Endpoint parse_cluster(std::string_view rest, std::string_view url) {
  Endpoint ep;
  std::string_view path;
  ep.seeds = take_hosts(rest, 6379, url, ep, path);
  if (!path.empty() && parse_db(path, url) != 0) {
    throw bad_url(url, "a Redis Cluster has database 0 only "
                       "(redis-cluster://HOST:PORT[,HOST:PORT...])");
  }
  ep.host = ep.seeds.front().host;
  ep.port = ep.seeds.front().port;
  return ep;
}

std::string bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// "h1:p1,[::1]:p2" (IPv6 bracketed).
std::string host_list(const std::vector<HostPort>& nodes) {
  std::string hosts;
  for (const auto& node : nodes) {
    hosts += fmt::format("{}{}:{}", hosts.empty() ? "" : ",", bracketed(node.host), node.port);
  }
  return hosts;
}

} // namespace

Endpoint Endpoint::at(const HostPort& node) const {
  Endpoint ep = *this;
  ep.transport = Transport::tcp;
  ep.host = node.host;
  ep.port = node.port;
  ep.sentinels.clear();
  ep.master.clear();
  ep.seeds.clear();
  return ep; // tls is kept: every node of a TLS deployment speaks TLS
}

std::string Endpoint::display() const {
  if (transport == Transport::unix_socket) {
    return db ? fmt::format("unix://{}?db={}", path, db) : fmt::format("unix://{}", path);
  }
  std::string user_part = user.empty() ? "" : user + "@";
  std::string db_part = db ? fmt::format("/{}", db) : "";
  if (is_sentinel()) {
    return fmt::format("{}-sentinel://{}{}/{}{}", tls ? "rediss" : "redis", user_part, host_list(sentinels),
                       printable(master), db_part);
  }
  if (is_cluster()) {
    return fmt::format("{}-cluster://{}{}", tls ? "rediss" : "redis", user_part, host_list(seeds));
  }
  return fmt::format("{}://{}{}:{}{}", tls ? "rediss" : "redis", user_part, bracketed(host), port, db_part);
}

Endpoint parse_url(std::string_view url) {
  auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    throw bad_url(url, "expected redis://host:port, rediss://host:port or unix:///path");
  }
  std::string_view scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);
  if (scheme == "redis") {
    return parse_tcp(rest, url);
  }
  if (scheme == "unix") {
    return parse_unix(rest, url);
  }
  if (scheme == "redis-sentinel") {
    return parse_sentinel(rest, url);
  }
  if (scheme == "redis-cluster") {
    return parse_cluster(rest, url);
  }
  if (scheme == "rediss" || scheme == "rediss-sentinel" || scheme == "rediss-cluster") {
    auto ep = scheme == "rediss"            ? parse_tcp(rest, url)
              : scheme == "rediss-sentinel" ? parse_sentinel(rest, url)
                                            : parse_cluster(rest, url);
    ep.tls.emplace();
    return ep;
  }
  throw bad_url(url, fmt::format("unknown scheme '{}' (use redis://, rediss://, redis-sentinel://, "
                                 "rediss-sentinel://, redis-cluster://, rediss-cluster:// or unix://)",
                                 printable(scheme)));
}

std::optional<std::pair<std::size_t, std::size_t>> password_span(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return std::nullopt;
  }
  auto start = scheme_end + 3;
  // The authority as parse_url reads it: up to the first '/'. A password
  // holding '?', '#' or a space is one (issue 44: the fuzzer found such a URL
  // parsed with a password that this span missed, so that scrub_argv, the
  // records and CMD's URL kept it).
  auto end = std::min(url.size(), url.find('/', start));
  auto at = url.substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  auto colon = url.substr(start, at).find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{start + colon + 1, at - colon - 1};
}

std::string without_password(std::string_view url) {
  auto span = password_span(url);
  if (!span) {
    return std::string(url);
  }
  // Drop ":PW", and the "@" too when no user is left.
  std::string out(url.substr(0, span->first - 1));
  bool no_user = out.ends_with("://");
  std::size_t rest = span->first + span->second + (no_user ? 1 : 0);
  return out + std::string(url.substr(rest));
}

namespace {

// The first ',' of `list` that is followed by a scheme ("redis://..."), by
// another ',' or by nothing, or that starts it: the commas of a Sentinel URL's host list are
// followed by a host (an empty element is an empty URL, not part of one).
std::size_t next_url_comma(std::string_view list) {
  for (auto comma = list.find(','); comma != std::string_view::npos; comma = list.find(',', comma + 1)) {
    std::string_view next = list.substr(comma + 1);
    if (comma == 0 || next.empty() || next.front() == ',') {
      return comma;
    }
    auto sep = next.find("://");
    if (sep != std::string_view::npos && sep > 0 &&
        next.substr(0, sep).find_first_not_of("abcdefghijklmnopqrstuvwxyz-+.") == std::string_view::npos) {
      return comma;
    }
  }
  return std::string_view::npos;
}

} // namespace

std::vector<std::string> choose_urls(const std::vector<std::string>& flags, const char* (*env)(const char*)) {
  if (!flags.empty()) {
    // One -u, one URL (issue 43): a comma list there is a Redlock written the
    // RLOCK_URL way, which would otherwise fail as a bad port or database.
    for (std::size_t i = 0; i < flags.size(); ++i) {
      if (next_url_comma(flags[i]) != std::string_view::npos) {
        // Said by position: the text may hold a password.
        throw UsageError(
            fmt::format("-u/--url: one -u takes one URL, and -u {} of {} is a comma-separated "
                        "list; for a Redlock give -u once per master (-u redis://a -u redis://b), "
                        "or set RLOCK_URL to the list",
                        i + 1, flags.size()));
      }
    }
    return flags;
  }
  if (const char* list = env("RLOCK_URL"); list != nullptr && *list != '\0') {
    std::vector<std::string> urls;
    std::string_view rest(list);
    bool more = true;
    while (more) {
      auto comma = next_url_comma(rest);
      urls.emplace_back(rest.substr(0, comma));
      more = comma != std::string_view::npos;
      rest = more ? rest.substr(comma + 1) : std::string_view{};
    }
    for (std::size_t i = 0; i < urls.size(); ++i) {
      if (urls[i].empty()) {
        // Said by position: the list itself may hold passwords.
        throw UsageError(fmt::format("RLOCK_URL: URL {} of {} is empty ('', from two commas in a row or one "
                                     "at an end); separate URLs with single commas",
                                     i + 1, urls.size()));
      }
    }
    return urls;
  }
  if (const char* url = env("REDIS_URL"); url != nullptr && *url != '\0') {
    return {url};
  }
  return {std::string(k_default_url)};
}

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "h1:p1,h2:p2", lower case, sorted: the same hosts in any order and spelling.
std::string sorted_hosts(const std::vector<HostPort>& nodes) {
  std::vector<std::string> hosts;
  for (const auto& node : nodes) {
    hosts.push_back(fmt::format("{}:{}", lower(node.host), node.port));
  }
  std::sort(hosts.begin(), hosts.end());
  std::string out;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    out += (i ? "," : "") + hosts[i];
  }
  return out;
}

// Every address `host` resolves to, as "IP:PORT" (IPv6 bracketed); empty when it
// does not resolve.
std::vector<std::string> resolve(const std::string& host, int port) {
  std::vector<std::string> out;
  AddressList list;
  try {
    list = resolve_tcp(host, port);
  } catch (const RedisError&) {
    return out;
  }
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    char ip[NI_MAXHOST];
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, ip, sizeof ip, nullptr, 0, NI_NUMERICHOST) == 0) {
      out.push_back(ai->ai_family == AF_INET6 ? fmt::format("[{}]:{}", ip, port)
                                              : fmt::format("{}:{}", ip, port));
    }
  }
  return out;
}

} // namespace

void AddrinfoDeleter::operator()(addrinfo* list) const {
  freeaddrinfo(list);
}

AddressList resolve_tcp(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
  if (gai != 0) {
    std::string why = gai == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(gai);
    throw RedisError(RedisErrorKind::connect, fmt::format("cannot resolve {}: {}", printable(host), why));
  }
  return AddressList(list);
}

std::string server_key(const Endpoint& endpoint) {
  if (endpoint.transport == Endpoint::Transport::unix_socket) {
    return "unix:" + endpoint.path;
  }
  if (endpoint.is_sentinel()) {
    return "sentinel:" + endpoint.master + "@" + sorted_hosts(endpoint.sentinels);
  }
  if (endpoint.is_cluster()) {
    return "cluster:" + sorted_hosts(endpoint.seeds);
  }
  return fmt::format("tcp:{}:{}", lower(endpoint.host), endpoint.port);
}

std::vector<std::string> server_addresses(const Endpoint& endpoint) {
  if (endpoint.transport == Endpoint::Transport::unix_socket) {
    struct stat st {};
    if (::stat(endpoint.path.c_str(), &st) == 0) {
      return {fmt::format("unix:{}:{}", static_cast<unsigned long long>(st.st_dev),
                          static_cast<unsigned long long>(st.st_ino))};
    }
    return {server_key(endpoint)};
  }
  if (endpoint.is_sentinel()) {
    std::vector<std::string> out;
    for (const auto& node : endpoint.sentinels) {
      for (const auto& address : resolve(node.host, node.port)) {
        out.push_back(fmt::format("sentinel:{}@{}", endpoint.master, address));
      }
    }
    if (out.empty()) {
      out.push_back(server_key(endpoint));
    }
    return out;
  }
  if (endpoint.is_cluster()) {
    std::vector<std::string> out;
    for (const auto& node : endpoint.seeds) {
      for (auto& address : resolve(node.host, node.port)) {
        out.push_back(std::move(address));
      }
    }
    if (out.empty()) {
      out.push_back(server_key(endpoint));
    }
    return out;
  }
  auto out = resolve(endpoint.host, endpoint.port);
  if (out.empty()) {
    out.push_back(server_key(endpoint));
  }
  return out;
}

std::optional<SameServer> same_server(const std::vector<std::vector<std::string>>& addresses) {
  for (std::size_t j = 1; j < addresses.size(); ++j) {
    const std::set<std::string> later(addresses[j].begin(), addresses[j].end());
    for (std::size_t i = 0; i < j; ++i) {
      for (const auto& address : addresses[i]) {
        if (later.count(address)) {
          return SameServer{i, j, address};
        }
      }
    }
  }
  return std::nullopt;
}

std::string same_server_message(const Endpoint& first, const Endpoint& second, const std::string& address) {
  return fmt::format(
      "--url: {} and {} are the same server{}; a Redlock needs independent masters, each counted once",
      first.display(), second.display(), address.empty() ? "" : " (" + printable(address) + ")");
}

} // namespace rlock::redis
