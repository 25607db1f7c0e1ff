// One connection: a non-blocking socket (TCP, unix or TLS), one deadline per
// request, hiredis's reader with caps, the HELLO handshake.

#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/connection.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/hiredis.hpp>
#include <rlock/redis/server_clock.hpp>
#include <rlock/redis/slots.hpp>
#include <rlock/redis/tls.hpp>

#include <fmt/format.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace rlock::redis {

namespace {

std::string format_command(const Argv& argv) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const auto& arg : argv) {
    ptrs.push_back(arg.data());
    lens.push_back(arg.size());
  }
  char* out = nullptr;
  int len = redisFormatCommandArgv(&out, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  if (len < 0 || out == nullptr) {
    throw std::bad_alloc();
  }
  std::string cmd(out, static_cast<std::size_t>(len));
  redisFreeCommand(out);
  return cmd;
}

// For -v logs: the command with arguments shortened; AUTH's password hidden.
std::string argv_summary(const Argv& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (i > 0 && argv[0] == "AUTH" && i + 1 == argv.size()) {
      arg = "***";
    } else if (arg.size() > 60) {
      arg = arg.substr(0, 60) + "...";
    }
    out += (i ? " " : "") + printable(arg);
  }
  return out;
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

} // namespace

int ServerInfo::major() const {
  int value = 0;
  for (char c : version) {
    if (c < '0' || c > '9') {
      break;
    }
    value = value * 10 + (c - '0');
    if (value > 1000) {
      return 0;
    }
  }
  return value;
}

Connection::Connection(Endpoint endpoint, Timeouts timeouts, bool require_primary)
    : m_endpoint(std::move(endpoint)), m_timeouts(timeouts), m_require_primary(require_primary) {}

Connection::~Connection() {
  close();
}

Connection::Connection(Connection&& other) noexcept
    : m_endpoint(std::move(other.m_endpoint)), m_timeouts(other.m_timeouts),
      m_require_primary(other.m_require_primary), m_fd(std::exchange(other.m_fd, -1)),
      m_tls(std::move(other.m_tls)), m_reader(std::move(other.m_reader)),
      m_hello_pending(other.m_hello_pending), m_clock_pending(other.m_clock_pending),
      m_answered(other.m_answered), m_scripts(std::move(other.m_scripts)), m_info(std::move(other.m_info)) {
  other.m_reader.reset();
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    m_endpoint = std::move(other.m_endpoint);
    m_timeouts = other.m_timeouts;
    m_require_primary = other.m_require_primary;
    m_fd = std::exchange(other.m_fd, -1);
    m_tls = std::move(other.m_tls);
    m_reader = std::move(other.m_reader);
    m_hello_pending = other.m_hello_pending;
    m_clock_pending = other.m_clock_pending;
    m_answered = other.m_answered;
    m_scripts = std::move(other.m_scripts);
    m_info = std::move(other.m_info);
    other.m_reader.reset();
  }
  return *this;
}

void Connection::close() {
  m_tls.reset(); // before its socket
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  m_reader.reset();
  m_hello_pending = false;
  m_clock_pending = false;
  m_answered = false;
  m_scripts.clear();
}

bool Connection::knows_script(std::string_view sha) const {
  return std::find(m_scripts.begin(), m_scripts.end(), sha) != m_scripts.end();
}

void Connection::note_script(std::string_view sha) {
  if (!knows_script(sha)) {
    m_scripts.emplace_back(sha);
  }
}

bool Connection::connected() const {
  return m_fd >= 0;
}

int Connection::fd() const {
  return m_fd;
}

void Connection::fail(RedisErrorKind kind, const std::string& what) {
  // Nothing answered yet on this connection: what the peer may be (issue 43).
  const bool unanswered = m_fd >= 0 && !m_answered;
  const bool plain_tcp = m_endpoint.transport == Endpoint::Transport::tcp && !m_endpoint.tls;
  close();
  if (unanswered && kind == RedisErrorKind::protocol) {
    // Its first answer is not Redis's protocol: no Redis listens there. Like
    // a refused connection, nothing was applied: unavailable (69), and
    // `run --if-unavailable` does what it says.
    throw RedisError(RedisErrorKind::connect,
                     fmt::format("not a Redis server: its first answer is not Redis's protocol ({}){}", what,
                                 plain_tcp ? "; if that port speaks TLS, use rediss://" : ""));
  }
  if (unanswered && plain_tcp && kind == RedisErrorKind::closed) {
    // A TLS port drops a plain-text request without a word.
    throw RedisError(kind, what + " before any answer (if that port speaks TLS, use rediss://)");
  }
  throw RedisError(kind, what); // the caller's context names the endpoint
}

void Connection::fail_timeout(const char* doing) {
  // The server may still apply the request, and a late reply would be taken
  // for the next one's: the connection's state is unknown, so fail() closes it.
  fail(RedisErrorKind::timeout,
       fmt::format("{} within {} (--io-timeout)", doing, format_duration(m_timeouts.io)));
}

void Connection::connect_socket(TimePoint deadline) {
  auto try_connect = [&](int family, const sockaddr* addr, socklen_t len) -> int {
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      return -errno;
    }
    if (::connect(fd, addr, len) == 0) {
      return fd;
    }
    if (errno != EINPROGRESS && errno != EAGAIN) {
      int err = errno;
      ::close(fd);
      return -err;
    }
    pollfd pfd{fd, POLLOUT, 0};
    int rc = 0;
    do {
      rc = ::poll(&pfd, 1, poll_timeout_ms(deadline));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      ::close(fd);
      return -ETIMEDOUT;
    }
    int err = 0;
    socklen_t err_len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (err != 0) {
      ::close(fd);
      return -err;
    }
    return fd;
  };

  int result = -ECONNREFUSED;
  if (m_endpoint.transport == Endpoint::Transport::unix_socket) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (m_endpoint.path.size() >= sizeof addr.sun_path) {
      fail(RedisErrorKind::connect, "unix socket path too long");
    }
    std::memcpy(addr.sun_path, m_endpoint.path.c_str(), m_endpoint.path.size() + 1);
    result = try_connect(AF_UNIX, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } else {
    AddressList list;
    try {
      list = resolve_tcp(m_endpoint.host, m_endpoint.port);
    } catch (const RedisError& e) {
      fail(e.kind(), e.what());
    }
    for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
      result = try_connect(ai->ai_family, ai->ai_addr, ai->ai_addrlen);
      if (result >= 0 || result == -ETIMEDOUT) {
        break;
      }
    }
    if (result >= 0) {
      int one = 1;
      setsockopt(result, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      // Every close is an abort (RST): the kernel drops what it has not sent
      // yet, so a request rlock gave up on (a timeout, an exit, a SIGKILL)
      // cannot leave its send queue when a partition heals and be run then
      // (issue 34). A request that did leave is refused by its deadline
      // (server_clock.hpp). Over TLS too: the same socket, no close_notify.
      linger abort{1, 0};
      setsockopt(result, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    }
  }
  if (result < 0) {
    // Nothing was sent: a connect timeout is a failure to connect, never a
    // request the server might still apply.
    fail(RedisErrorKind::connect,
         fmt::format("cannot connect: {}", result == -ETIMEDOUT
                                               ? "timed out after " + format_duration(m_timeouts.connect)
                                               : std::strerror(-result)));
  }
  set_nonblocking(result);
  m_fd = result;
  m_reader.emplace();
  if (m_endpoint.tls) {
    start_tls(deadline);
  }
}

void Connection::start_tls(TimePoint deadline) {
  const TlsOptions& options = *m_endpoint.tls;
  // Every node is checked against --tls-server-name when given (Cluster nodes
  // and sentinels announce addresses, a certificate often names the service),
  // else against the host it was reached at.
  const std::string& name = options.server_name.empty() ? m_endpoint.host : options.server_name;
  try {
    m_tls = std::make_unique<TlsSession>(tls_context(options), m_fd, name);
    // The handshake shares the TCP connect's deadline, checked at every step:
    // a server that trickles handshake bytes cannot stretch it.
    for (TlsWait wait = m_tls->handshake(); wait != 0; wait = m_tls->handshake()) {
      pollfd pfd{m_fd, wait, 0};
      int rc = 0;
      do {
        rc = ::poll(&pfd, 1, poll_timeout_ms(deadline));
      } while (rc < 0 && errno == EINTR);
      if (rc == 0 || Clock::now() >= deadline) {
        fail(RedisErrorKind::connect, fmt::format("TLS handshake timed out after {} (--connect-timeout)",
                                                  format_duration(m_timeouts.connect)));
      }
    }
  } catch (const RedisError& e) {
    fail(e.kind(), e.what());
  } catch (...) {
    close();
    throw;
  }
  log::debug("{}: {}", describe(), m_tls->describe());
}

void Connection::ensure_connected() {
  if (m_fd >= 0) {
    // A server that closed an idle connection (timeout, restart) has left EOF
    // or an error to read; a healthy idle connection has nothing pending. The
    // request has not been sent yet, so reconnecting here is always safe.
    pollfd pfd{m_fd, POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 0) {
      return;
    }
    // Over TLS the server also sends records without data (TLS 1.3 session
    // tickets): read, they leave a healthy connection.
    if (m_tls && (pfd.revents & (POLLHUP | POLLERR)) == 0 && m_tls->idle_records_only()) {
      return;
    }
    log::debug("{}: connection closed by the server, reconnecting", describe());
    close();
  }
  auto deadline = Clock::now() + m_timeouts.connect;
  connect_socket(deadline);
  m_info = {};
  if (!m_endpoint.password && m_endpoint.db == 0 && !m_require_primary) {
    m_hello_pending = true; // goes with the first request: no extra round trip
    return;
  }
  try {
    handshake();
  } catch (const RedisError& e) {
    close();
    if (std::string_view(e.what()).find("DB index is out of range") != std::string_view::npos) {
      throw Error(Outcome::bad_setting,
                  fmt::format("--url: database {} does not exist on {}", m_endpoint.db, describe()));
    }
    throw;
  }
}

void Connection::handshake() {
  std::vector<Argv> hello;
  if (m_endpoint.password) {
    if (m_endpoint.user.empty()) {
      hello.push_back({"AUTH", *m_endpoint.password});
    } else {
      hello.push_back({"AUTH", m_endpoint.user, *m_endpoint.password});
    }
  }
  if (m_endpoint.db != 0) {
    hello.push_back({"SELECT", std::to_string(m_endpoint.db)});
  }
  const std::size_t hello_at = hello.size();
  for (auto& command : hello_commands()) {
    hello.push_back(std::move(command));
  }
  auto replies = exchange(hello, Millis(0));
  for (std::size_t i = 0; i < hello_at; ++i) {
    if (replies[i].type == Reply::Type::error) {
      throw error_from_reply(replies[i].str);
    }
  }
  take_hello_replies(replies, hello_at);
  if (m_require_primary && m_info.known && m_info.role != "master") {
    fail(RedisErrorKind::readonly, fmt::format("{} is a {}, not the primary", describe(), printable(m_info.role)));
  }
}

ServerInfo server_info_of_hello(const Reply& reply) {
  ServerInfo info;
  if (!reply.is_array()) {
    return info;
  }
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const auto& key = reply.elements[i];
    const auto& value = reply.elements[i + 1];
    if (key.type != Reply::Type::string || value.type != Reply::Type::string) {
      continue;
    }
    if (key.str == "server") {
      info.name = printable(value.str.substr(0, 32));
    } else if (key.str == "version") {
      info.version = printable(value.str.substr(0, 32));
    } else if (key.str == "mode") {
      info.mode = value.str.substr(0, 32);
    } else if (key.str == "role") {
      info.role = value.str.substr(0, 32);
    }
  }
  info.known = !info.mode.empty();
  return info;
}

void Connection::take_hello(const Reply& reply) {
  m_hello_pending = false;
  m_info = server_info_of_hello(reply); // an old server (no HELLO), or refused: nothing known
}

std::vector<Argv> Connection::hello_commands() const {
  std::vector<Argv> out{{"HELLO", "2"}};
  if (m_endpoint.identify) {
    out.push_back({"INFO", "server"});
  }
  if (m_endpoint.learn_replicas) {
    out.push_back({"INFO", "replication"});
    if (m_endpoint.cluster_view) {
      out.push_back({"CLUSTER", "NODES"});
    }
  }
  return out;
}

std::optional<long long> replicas_of_info(const Reply& reply) {
  if (reply.type != Reply::Type::string && reply.type != Reply::Type::status) {
    return std::nullopt;
  }
  // "field:value" lines; a field at the start of the text or of a line.
  auto field = [&](std::string_view name) -> std::optional<std::string_view> {
    std::string_view text = reply.str;
    for (std::size_t pos = text.find(name); pos != std::string_view::npos; pos = text.find(name, pos + 1)) {
      if ((pos == 0 || text[pos - 1] == '\n') && pos + name.size() < text.size() && text[pos + name.size()] == ':') {
        auto begin = pos + name.size() + 1;
        auto end = text.find_first_of("\r\n", begin);
        return text.substr(begin, (end == std::string_view::npos ? text.size() : end) - begin);
      }
    }
    return std::nullopt;
  };
  auto role = field("role");
  if (!role) {
    return std::nullopt;
  }
  if (*role != "master") {
    return 0; // a replica's own replicas (chained) take no writes from us
  }
  auto count = field("connected_slaves");
  long long n = -1;
  if (!count || count->empty() || count->size() > 6) {
    return std::nullopt;
  }
  auto [ptr, ec] = std::from_chars(count->data(), count->data() + count->size(), n);
  if (ec != std::errc() || ptr != count->data() + count->size() || n < 0) {
    return std::nullopt;
  }
  return n;
}

void Connection::take_replication(const Reply& reply) {
  m_info.replicas = replicas_of_info(reply);
  m_info.replicas_at = Clock::now();
  m_info.role_refused = reply.type == Reply::Type::error;
  if (m_info.role_refused) {
    log::debug("{}: cannot count its replicas ({}): the default replica sync does not wait there", describe(),
               printable(reply.str.substr(0, 120)));
  }
}

void Connection::take_cluster_view(const Reply& reply) {
  auto view = cluster_view(reply, m_endpoint.host);
  m_info.cluster_replicas =
      view ? std::optional<long long>(static_cast<long long>(view->replicas.size())) : std::nullopt;
  m_info.cluster_view_asked = true;
}

void Connection::take_hello_replies(std::vector<Reply>& replies, std::size_t at) {
  take_hello(replies[at]);
  std::size_t taken = 1;
  if (m_endpoint.identify) {
    ++taken;
    const auto& info = replies[at + 1];
    if (info.type == Reply::Type::string || info.type == Reply::Type::status) {
      // "run_id:<40 hex>\r\n" among INFO server's lines; anything else: unknown.
      static constexpr std::string_view k_field = "run_id:";
      auto pos = info.str.find(k_field);
      if (pos != std::string::npos && (pos == 0 || info.str[pos - 1] == '\n')) {
        auto begin = pos + k_field.size();
        auto end = info.str.find_first_of("\r\n", begin);
        m_info.run_id = printable(info.str.substr(begin, std::min<std::size_t>(end - begin, 64)));
      }
    }
  }
  if (m_endpoint.learn_replicas) {
    take_replication(replies[at + taken]);
    ++taken;
    if (m_endpoint.cluster_view) {
      take_cluster_view(replies[at + taken]);
      ++taken;
    }
    log::debug("{}: replicas: {} connected (INFO replication){}", describe(),
               m_info.replicas ? std::to_string(*m_info.replicas) : "unknown",
               m_info.cluster_replicas
                   ? fmt::format(", {} in the cluster's view (CLUSTER NODES)", *m_info.cluster_replicas)
                   : std::string());
  }
  replies.erase(replies.begin() + static_cast<std::ptrdiff_t>(at),
                replies.begin() + static_cast<std::ptrdiff_t>(at + taken));
}

const ServerInfo& Connection::server_info() {
  ensure_connected();
  if (m_hello_pending) {
    auto replies = exchange(hello_commands(), Millis(0));
    take_hello_replies(replies, 0);
  }
  return m_info;
}

long Connection::transport_write(const char* data, std::size_t size, short& wait) {
  if (m_tls) {
    try {
      return m_tls->write(data, size, wait);
    } catch (const RedisError& e) {
      fail(e.kind(), e.what());
    }
  }
  for (;;) {
    ssize_t n = ::send(m_fd, data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      return n;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait = POLLOUT;
      return -1;
    }
    fail(errno == EPIPE || errno == ECONNRESET ? RedisErrorKind::closed : RedisErrorKind::io,
         fmt::format("send failed: {}", std::strerror(errno)));
  }
}

long Connection::transport_read(char* buf, std::size_t size, short& wait) {
  if (m_tls) {
    try {
      return m_tls->read(buf, size, wait);
    } catch (const RedisError& e) {
      fail(e.kind(), e.what());
    }
  }
  for (;;) {
    ssize_t n = ::recv(m_fd, buf, size, 0);
    if (n >= 0) {
      return n;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait = POLLIN;
      return -1;
    }
    fail(errno == ECONNRESET ? RedisErrorKind::closed : RedisErrorKind::io,
         fmt::format("receive failed: {}", std::strerror(errno)));
  }
}

void Connection::write_all(std::string_view data, TimePoint deadline) {
  while (!data.empty()) {
    if (Clock::now() >= deadline) {
      fail_timeout("request not sent");
    }
    short wait = 0;
    long n = transport_write(data.data(), data.size(), wait);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    pollfd pfd{m_fd, wait, 0};
    if (::poll(&pfd, 1, poll_timeout_ms(deadline)) == 0) {
      fail_timeout("request not sent");
    }
  }
}

bool Connection::read_into_reader(TimePoint deadline) {
  char buf[16384];
  for (bool first = true;; first = false) {
    // Checked again after each wait: over TLS a readable socket may yield no
    // data (records cut into pieces, records without data), so bytes that keep
    // arriving cannot stretch the deadline here either.
    if (!first && Clock::now() >= deadline) {
      return false;
    }
    short wait = 0;
    long n = transport_read(buf, sizeof buf, wait);
    if (n > 0) {
      m_reader->feed(buf, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      fail(RedisErrorKind::closed, "connection closed by the server");
    }
    pollfd pfd{m_fd, wait, 0};
    if (::poll(&pfd, 1, poll_timeout_ms(deadline)) == 0) {
      return false;
    }
  }
}

bool Connection::pull_decrypted() {
  if (!m_tls || !m_tls->has_pending()) {
    return false;
  }
  char buf[16384];
  short wait = 0;
  long n = transport_read(buf, sizeof buf, wait); // returns what is decrypted, never waits
  if (n > 0) {
    m_reader->feed(buf, static_cast<std::size_t>(n));
    return true;
  }
  return false;
}

bool Connection::next_buffered(Reply& out) {
  try {
    return m_reader->next(out);
  } catch (const RedisError& e) {
    fail(e.kind(), e.what()); // garbage or over the caps: the stream is lost
  }
}

bool Connection::has_buffered_reply() {
  pull_decrypted();
  return m_reader && m_reader->buffered();
}

void Connection::send(const Argv& argv) {
  ensure_connected();
  m_hello_pending = false; // a subscription needs no HELLO: its replies are pushes
  log::debug("> {}", argv_summary(argv));
  write_all(format_command(argv), Clock::now() + m_timeouts.io);
}

bool Connection::read(Reply& out, TimePoint deadline) {
  if (m_fd < 0) {
    fail(RedisErrorKind::closed, "not connected");
  }
  // The deadline is checked before every receive, not only when poll waits:
  // a server that keeps sending without ever completing a reply (defect 6: 13 s
  // at --io-timeout 1s) is cut off too. A reply completed by the last bytes
  // received is still returned.
  while (!next_buffered(out)) {
    if (pull_decrypted()) {
      continue; // over TLS: what is decrypted already is read whatever the time
    }
    if (Clock::now() >= deadline || !read_into_reader(deadline)) {
      return false;
    }
  }
  m_answered = true;
  log::debug("< {}", out.summary());
  return true;
}

std::vector<Reply> Connection::pipeline(const std::vector<Argv>& commands, Millis extra) {
  ensure_connected();
  return roundtrip(commands, extra);
}

std::vector<Reply> Connection::exchange(const std::vector<Argv>& commands, Millis extra) {
  std::string out;
  for (const auto& argv : commands) {
    log::debug("> {}", argv_summary(argv));
    out += format_command(argv);
  }
  auto deadline = Clock::now() + m_timeouts.io + extra;
  write_all(out, deadline);
  std::vector<Reply> replies(commands.size());
  for (auto& reply : replies) {
    if (!read(reply, deadline)) {
      fail_timeout(has_buffered_reply() ? "reply not complete" : "no reply");
    }
  }
  return replies;
}

std::vector<Reply> Connection::roundtrip(const std::vector<Argv>& commands, Millis extra) {
  std::vector<Reply> replies;
  const bool hello = m_hello_pending;
  const bool clock = std::exchange(m_clock_pending, false);
  if (hello || clock) {
    std::vector<Argv> with_prefix = hello ? hello_commands() : std::vector<Argv>();
    const std::size_t time_at = with_prefix.size();
    if (clock) {
      with_prefix.push_back({"TIME"});
    }
    with_prefix.insert(with_prefix.end(), commands.begin(), commands.end());
    const TimePoint sent = Clock::now();
    replies = exchange(with_prefix, extra);
    if (clock) {
      take_time(replies[time_at], sent, Clock::now());
      replies.erase(replies.begin() + static_cast<std::ptrdiff_t>(time_at));
    }
    if (hello) {
      take_hello_replies(replies, 0); // an error (old server, no auth yet) only leaves it unknown
    }
  } else {
    replies = exchange(commands, extra);
  }
  for (const auto& reply : replies) {
    if (reply.type == Reply::Type::error) {
      throw error_from_reply(reply.str);
    }
  }
  return replies;
}

void Connection::take_time(const Reply& reply, TimePoint sent, TimePoint received) {
  // {seconds, microseconds} as strings; anything else (an ACL without +time,
  // a proxy) leaves the clock unknown.
  if (!reply.is_array() || reply.elements.size() != 2) {
    return;
  }
  long long parts[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const auto& text = reply.elements[static_cast<std::size_t>(i)].str;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parts[i]);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.size() > 12 || parts[i] < 0) {
      return;
    }
  }
  server_clocks::take(server_key(m_endpoint), {sent, received, parts[0] * 1000 + parts[1] / 1000});
}

Reply Connection::command(const Argv& argv) {
  return std::move(pipeline({argv}).front());
}

} // namespace rlock::redis
