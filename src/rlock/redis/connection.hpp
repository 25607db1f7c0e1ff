#pragma once

#include <rlock/core/clock.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/url.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisReader;

namespace rlock::redis {

struct Timeouts {
  Millis connect{2000};
  Millis io{2000}; // one whole request: write and complete reply
};

using Argv = std::vector<std::string>;

// One connection to one Redis server. Owns its socket (TCP or unix), speaks RESP
// through hiredis's formatter and reader, and bounds every request by a deadline
// with poll(2). Connects lazily and reconnects before a request when the server
// has closed an idle connection. Not thread-safe: one per thread.
//
// Every failure throws RedisError: connect / timeout / closed / io for the
// socket (the connection is then closed, the request's outcome unknown), or the
// typed error of an error reply (the connection stays usable).
class Connection {
public:
  Connection(Endpoint endpoint, Timeouts timeouts);
  ~Connection();
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;

  // Sends one command and returns its reply (throws on an error reply).
  Reply command(const Argv& argv);

  // Sends several commands in one round trip; returns their replies in order.
  // An error reply in the batch is thrown after all replies have been read.
  std::vector<Reply> pipeline(const std::vector<Argv>& commands);

  // Low level, for pub/sub: send without waiting, then read one reply (a push
  // message) before `deadline`. read() returns nothing if the deadline passed.
  void send(const Argv& argv);
  bool read(Reply& out, TimePoint deadline);

  // Connects now (and logs in) if not connected.
  void ensure_connected();
  void close();
  bool connected() const;
  // The socket, for poll(2) alongside other fds; -1 when not connected.
  int fd() const;
  // True when a complete reply is already buffered (poll would not report it).
  bool has_buffered_reply();

  const Endpoint& endpoint() const { return m_endpoint; }
  const Timeouts& timeouts() const { return m_timeouts; }
  // The endpoint for messages: never the password.
  std::string describe() const { return m_endpoint.display(); }

private:
  void connect_socket(TimePoint deadline);
  std::vector<Reply> roundtrip(const std::vector<Argv>& commands);
  void write_all(std::string_view data, TimePoint deadline);
  bool read_into_reader(TimePoint deadline);
  bool next_buffered(Reply& out);
  [[noreturn]] void fail(RedisErrorKind kind, const std::string& what);

  Endpoint m_endpoint;
  Timeouts m_timeouts;
  int m_fd = -1;
  redisReader* m_reader = nullptr;
};

} // namespace rlock::redis
