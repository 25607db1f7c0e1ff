#pragma once

// TLS (mbed TLS): a client setup and one session over a non-blocking socket.

#include <rlock/redis/url.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace rlock::redis {

// What a TLS call needs before it can go on: nothing (done), or the socket
// readable / writable (poll(2) events: POLLIN, POLLOUT).
using TlsWait = short;

// A client-side TLS setup (mbed TLS's parsed certificates and key, and a
// random generator): the trust store (the system's, or --tls-ca-file), the
// client certificate, verification on or off (--tls-insecure). Immutable once made; shared by
// every connection of every thread that uses the same TlsOptions (see
// tls_context()).
class TlsContext {
public:
  // Loads the files of `options`. Throws Error(bad_setting) naming the flag and
  // the file when one cannot be read or holds nothing usable (no certificate,
  // a key that does not match the certificate, an encrypted key).
  explicit TlsContext(const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  const TlsOptions& options() const { return m_options; }

  struct State; // mbed TLS's structures, without its headers in ours
  State& state() const { return *m_state; }

private:
  TlsOptions m_options;
  std::unique_ptr<State> m_state;
};

// The process's one TlsContext for `options` (the server name aside, which is
// per connection): made on first use, then shared. Thread-safe. Throws what
// TlsContext's constructor throws.
std::shared_ptr<const TlsContext> tls_context(const TlsOptions& options);

// One TLS session over a connected, non-blocking socket (mbed TLS). Never
// waits: each call does what it can now and says what it waits for; the caller
// polls the socket with its own deadline. Not thread-safe (one per Connection).
//
// The server's certificate is checked against `verify_name` (the host
// connected to, or --tls-server-name): as an IP address when it is one (the
// certificate's IP SANs), else as a DNS name (its DNS SANs), and that name is
// sent as SNI. Nothing is checked with --tls-insecure.
class TlsSession {
public:
  TlsSession(std::shared_ptr<const TlsContext> context, int fd, const std::string& verify_name);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // One step of the handshake: 0 when it is complete, else what to poll for.
  // Throws RedisError(connect, "TLS handshake failed: <the reason>
  // (<the certificate problem>)") when it fails.
  TlsWait handshake();

  // Reads up to `size` decrypted bytes: > 0 bytes read; 0 at the end of the
  // stream (close_notify or EOF); -1 with `wait` set when nothing can be read
  // now. Throws RedisError(closed / io) for a broken connection, but
  // RedisError(connect, "TLS handshake failed: ...") for a TLS failure (an
  // alert) before any data was received: a TLS 1.3 server refuses a client
  // certificate only after the client's side of the handshake is complete,
  // and never hands a request of that session to Redis.
  long read(char* buf, std::size_t size, TlsWait& wait);
  // Writes up to `size` bytes: > 0 bytes written, or -1 with `wait` set.
  // Throws as read() does (a send that meets the reset after such an alert
  // reads the alert).
  long write(const char* data, std::size_t size, TlsWait& wait);

  // "TLSv1.3 TLS_AES_256_GCM_SHA384", for -v.
  std::string describe() const;

  // Decrypted bytes the TLS library holds that read() returns without touching the
  // socket (poll(2) on the socket does not see them).
  bool has_pending() const;
  // For a connection that sits idle (no request outstanding) and whose socket
  // is readable: true when what arrived was only TLS records without data (a
  // TLS 1.3 session ticket, a key update), consumed now; false when the
  // server closed the connection or sent data nobody asked for.
  bool idle_records_only();

  struct State; // mbed TLS's session, and what the socket callbacks need

private:
  [[noreturn]] void fail(int rc, const char* doing, bool before_data);

  std::shared_ptr<const TlsContext> m_context;
  std::unique_ptr<State> m_state;
  bool m_handshake_done = false;
  bool m_received_data = false;
};

} // namespace rlock::redis
