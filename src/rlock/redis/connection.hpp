#pragma once

// One connection to one server: timeouts, the handshake's facts, requests.

#include <rlock/core/clock.hpp>
#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/url.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::redis {

class TlsSession;

struct Timeouts {
  Millis connect = k_default_connect_timeout; // TCP connect and, for TLS, the handshake: one deadline
  Millis io = k_default_io_timeout;           // one whole request: write and complete reply
  // These, none longer than `cap`.
  Timeouts capped(Millis cap) const { return {std::min(connect, cap), std::min(io, cap)}; }
};

using Argv = std::vector<std::string>;

// What a server says about itself in its HELLO reply (Redis 6+; nothing on
// older servers, or when HELLO was refused).
struct ServerInfo {
  bool known = false;
  std::string name;    // HELLO's "server": "redis", "valkey"
  std::string version; // "7.0.15"; Valkey's own ("8.1.1"), not the Redis it answers as
  std::string mode;    // "standalone", "cluster", "sentinel"
  std::string role;    // "master", "replica"
  std::string run_id;  // INFO server's run_id, asked only for an endpoint with `identify`
  // INFO replication's connected replicas (a primary's; 0 for a replica),
  // asked only for an endpoint with `learn_replicas`; nullopt when not asked
  // or refused.
  std::optional<long long> replicas;
  // Its replicas in the cluster's own view (CLUSTER NODES, asked with INFO
  // replication by an endpoint with `cluster_view`, or later: see
  // redis::cluster_view), listed whether or not they are connected; nullopt
  // when not asked, refused or not a view.
  std::optional<long long> cluster_replicas;
  bool cluster_view_asked = false; // CLUSTER NODES was asked (answered or refused)
  TimePoint replicas_at{}; // when `replicas` was learnt
  bool role_refused = false; // INFO replication answered an error (ACL): not asked again
  int major() const;   // 0 when unknown
};

// What a HELLO reply says (server, version, mode, role; each cut to 32
// bytes); nothing known when it is not a map of strings with a mode (an old
// server, or refused). Pure; the reply is untrusted.
ServerInfo server_info_of_hello(const Reply& reply);

// The replicas an INFO replication reply names: a primary's connected_slaves
// (every replica connected to it: online ones, and ones still syncing, which
// do not acknowledge yet, so a WAIT then fails: refusing is the safe side); a
// replica's reply ("role:slave") gives 0; an error or anything else, nullopt.
// Pure; the text is untrusted (a count of at most 6 digits).
std::optional<long long> replicas_of_info(const Reply& reply);

// One connection to one Redis server. Owns its socket (TCP or unix; TLS over TCP
// for an endpoint with `tls`: mbed TLS, through the two transport functions,
// the handshake within Timeouts::connect), speaks RESP
// through hiredis's formatter and a ReplyReader, and bounds every request by one
// deadline (Timeouts::io) for writing it and reading its whole reply, checked
// even while bytes keep arriving; replies are capped (k_max_reply_bytes,
// k_max_reply_values). Connects lazily and reconnects before a request when the
// server has closed an idle connection. Not thread-safe: one per thread.
//
// Every failure throws RedisError: connect / timeout / closed / io for the
// socket, protocol for a reply that is not RESP or over the caps (the connection
// is then closed, the request's outcome unknown), or the typed error of an error
// reply (the connection stays usable).
//
// The server is asked HELLO 2 once per connection: in the round trip of the
// first request when no login is needed, else after AUTH and SELECT. With
// `require_primary` (a primary named by sentinels) the handshake always comes
// first, and a server whose role is not master is refused (RedisError readonly).
class Connection {
public:
  Connection(Endpoint endpoint, Timeouts timeouts, bool require_primary = false);
  ~Connection();
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;

  // Sends one command and returns its reply. Throws the typed error of an error
  // reply; RedisError(timeout) when writing it and reading its whole reply take
  // longer than Timeouts::io; the socket and protocol errors above.
  Reply command(const Argv& argv);

  // Sends several commands in one round trip; returns their replies in order.
  // One io deadline covers the whole batch. An error reply in the batch is
  // thrown after all replies have been read.
  // `extra` lengthens the deadline (a WAIT in the batch may block that long).
  std::vector<Reply> pipeline(const std::vector<Argv>& commands, Millis extra = Millis(0));

  // Low level, for pub/sub. send() writes a command within Timeouts::io without
  // waiting for its reply (RedisError(timeout) if it cannot).
  void send(const Argv& argv);
  // Reads one reply (a push message) into `out` and returns true, or returns
  // false when `deadline` passes first (also while a reply is still arriving:
  // its part stays buffered for the next read). An error reply is returned, not
  // thrown. Throws the socket and protocol errors above (reply caps included).
  bool read(Reply& out, TimePoint deadline);

  // Connects now (and logs in) if not connected.
  void ensure_connected();
  // What the server said in its HELLO reply; asks it now when it has not yet.
  const ServerInfo& server_info();
  void close();
  bool connected() const;
  // The socket, for poll(2) alongside other fds; -1 when not connected.
  int fd() const;
  // True when received bytes are buffered that read() has not returned yet (poll
  // would not report them): a complete reply, or the start of one. Over TLS,
  // the bytes the TLS library has decrypted already are taken into the reader first,
  // so a poll on fd() after a false answer misses nothing.
  bool has_buffered_reply();

  // Scripts this connection has run (EVALSHA answered without NOSCRIPT):
  // forgotten when it closes.
  bool knows_script(std::string_view sha) const;
  void note_script(std::string_view sha);

  // The server's run_id if it is known yet (an `identify` endpoint, after the
  // first request); empty otherwise. Never asks.
  const std::string& run_id() const { return m_info.run_id; }
  // What the last INFO replication said (see ServerInfo::replicas). Never asks.
  const ServerInfo& known_info() const { return m_info; }
  // Takes an INFO replication reply that rode with a request.
  void take_replication(const Reply& reply);
  // TIME rides with the next request (same round trip, before it) and what
  // it says goes to server_clocks (server_clock.hpp); an error reply (an ACL
  // without +time) only leaves the clock unknown.
  void sample_clock_next() { m_clock_pending = true; }
  // Takes a CLUSTER NODES reply that rode with a request (ServerInfo::cluster_replicas).
  void take_cluster_view(const Reply& reply);
  // True when the next request carries the handshake (HELLO, and INFO
  // replication with `learn_replicas`, and CLUSTER NODES with `cluster_view`
  // too), or the connection is closed and will make one.
  bool handshake_next() const { return m_fd < 0 || m_hello_pending; }

  const Endpoint& endpoint() const { return m_endpoint; }
  const Timeouts& timeouts() const { return m_timeouts; }
  // The endpoint for messages: never the password.
  std::string describe() const { return m_endpoint.display(); }

private:
  void connect_socket(TimePoint deadline);
  std::vector<Reply> roundtrip(const std::vector<Argv>& commands, Millis extra = Millis(0));
  // Sends `commands` and returns every reply, error replies included.
  std::vector<Reply> exchange(const std::vector<Argv>& commands, Millis extra);
  void handshake();
  void take_hello(const Reply& reply);
  void take_time(const Reply& reply, TimePoint sent, TimePoint received);
  // The HELLO (and, with `identify`, INFO server) commands, and taking their
  // replies from the front of `replies` (errors only leave facts unknown).
  std::vector<Argv> hello_commands() const;
  void take_hello_replies(std::vector<Reply>& replies, std::size_t at);
  void start_tls(TimePoint deadline);
  void write_all(std::string_view data, TimePoint deadline);
  bool read_into_reader(TimePoint deadline);
  // TLS: moves bytes the TLS library has decrypted already into the reader, without
  // touching the socket; true when there were some.
  bool pull_decrypted();
  // The transport: the socket itself, or TLS over it. Each moves what it can
  // now: > 0 bytes; 0 at the end of the stream (read); -1 with `wait` set to
  // the poll(2) events it waits for. A broken connection fails (closes, throws).
  long transport_read(char* buf, std::size_t size, short& wait);
  long transport_write(const char* data, std::size_t size, short& wait);
  bool next_buffered(Reply& out);
  [[noreturn]] void fail_timeout(const char* doing);
  [[noreturn]] void fail(RedisErrorKind kind, const std::string& what);

  Endpoint m_endpoint;
  Timeouts m_timeouts;
  bool m_require_primary = false;
  int m_fd = -1;
  std::unique_ptr<TlsSession> m_tls;   // set while connected over TLS
  std::optional<ReplyReader> m_reader; // set while connected
  bool m_hello_pending = false;        // HELLO goes with the next request
  bool m_clock_pending = false;        // TIME goes with the next request
  // A reply was read on this connection: the peer speaks Redis's protocol
  // (fail() says what a peer that never did may be: issue 43).
  bool m_answered = false;
  std::vector<std::string> m_scripts;  // SHA1s run here (knows_script)
  ServerInfo m_info;
};

} // namespace rlock::redis
