#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/tls.hpp>

#include <fmt/format.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace rlock::redis {

namespace {

// OpenSSL's reason for the last failure of this thread ("certificate verify
// failed"), and the queue cleared for the next call.
std::string openssl_reason() {
  unsigned long code = ERR_peek_last_error();
  std::string reason;
  if (code != 0) {
    const char* text = ERR_reason_error_string(code);
    reason = text != nullptr ? text : fmt::format("OpenSSL error {:#x}", code);
  }
  ERR_clear_error();
  return reason;
}

Error bad_file(std::string_view flag, const std::string& path, std::string_view why) {
  return Error(Outcome::bad_setting, fmt::format("{}: {}: {}", flag, printable(path), why));
}

// A readable regular file, or a usage error saying why not (OpenSSL's own
// messages for a missing file are "system lib" and the like).
void check_readable(std::string_view flag, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw bad_file(flag, path, fmt::format("cannot read it: {}", std::strerror(errno)));
  }
  struct stat st {};
  bool dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  ::close(fd);
  if (dir) {
    throw bad_file(flag, path, "is a directory; give a PEM file");
  }
}

// The socket under a TLS session, OpenSSL's BIO: plain recv/send on the
// non-blocking socket, but sending with MSG_NOSIGNAL (OpenSSL's own socket BIO
// write()s, and a server that closed the connection would kill rlock with
// SIGPIPE, which rlock does not ignore outside `run`).
int socket_fd(BIO* bio) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio)));
}

int bio_write(BIO* bio, const char* data, int len) {
  BIO_clear_retry_flags(bio);
  ssize_t n = 0;
  do {
    n = ::send(socket_fd(bio), data, static_cast<std::size_t>(len), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    BIO_set_retry_write(bio);
  }
  return static_cast<int>(n);
}

int bio_read(BIO* bio, char* buf, int len) {
  BIO_clear_retry_flags(bio);
  ssize_t n = 0;
  do {
    n = ::recv(socket_fd(bio), buf, static_cast<std::size_t>(len), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    BIO_set_retry_read(bio);
  }
  return static_cast<int>(n);
}

long bio_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0; // nothing is buffered here
}

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int bio_destroy(BIO*) {
  return 1; // the socket belongs to the Connection
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rlock socket");
    if (m == nullptr) {
      throw std::bad_alloc();
    }
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    BIO_meth_set_destroy(m, bio_destroy);
    return m;
  }();
  return method;
}

bool is_ip_address(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// A hint for the failures people meet first.
std::string hint_for(const std::string& reason) {
  if (reason.find("certificate required") != std::string::npos) {
    return "; the server wants a client certificate (--tls-cert, --tls-key)";
  }
  if (reason.find("wrong version number") != std::string::npos ||
      reason.find("packet length too long") != std::string::npos ||
      reason.find("record layer failure") != std::string::npos) {
    return "; is the server speaking TLS on that port?";
  }
  return "";
}

} // namespace

TlsContext::TlsContext(const TlsOptions& options) : m_options(options) {
  // The system's openssl.cnf is not read: it may load engines or provider
  // modules with dlopen, which a static rlock cannot do safely. The trust
  // store and the library's defaults (protocols, security level) stay.
  OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
  ERR_clear_error();
  m_ctx = SSL_CTX_new(TLS_client_method());
  if (m_ctx == nullptr) {
    throw Error(Outcome::failed, fmt::format("cannot set up TLS: {}", openssl_reason()));
  }
  SSL_CTX_set_min_proto_version(m_ctx, TLS1_2_VERSION);
  // SSL_write may send part of a buffer and be called again with the rest,
  // from wherever the caller's string now is.
  SSL_CTX_set_mode(m_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
  // A server that closes without close_notify (Redis at a client timeout) is a
  // closed connection; RESP replies end where they say, so a cut one is seen.
  SSL_CTX_set_options(m_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
  // An encrypted key would make OpenSSL ask for a pass phrase on the terminal.
  SSL_CTX_set_default_passwd_cb(m_ctx, [](char*, int, int, void*) { return 0; });

  try {
    if (options.insecure) {
      SSL_CTX_set_verify(m_ctx, SSL_VERIFY_NONE, nullptr);
    } else {
      SSL_CTX_set_verify(m_ctx, SSL_VERIFY_PEER, nullptr);
      if (!options.ca_file.empty()) {
        check_readable("--tls-ca-file", options.ca_file);
        if (SSL_CTX_load_verify_locations(m_ctx, options.ca_file.c_str(), nullptr) != 1) {
          throw bad_file("--tls-ca-file", options.ca_file,
                         fmt::format("no CA certificate in it (PEM expected): {}", openssl_reason()));
        }
      } else if (SSL_CTX_set_default_verify_paths(m_ctx) != 1) {
        throw Error(Outcome::failed,
                    fmt::format("cannot load the system's trust store: {}", openssl_reason()));
      }
    }
    if (!options.cert.empty()) {
      check_readable("--tls-cert", options.cert);
      if (SSL_CTX_use_certificate_chain_file(m_ctx, options.cert.c_str()) != 1) {
        throw bad_file("--tls-cert", options.cert,
                       fmt::format("no certificate in it (PEM expected): {}", openssl_reason()));
      }
      check_readable("--tls-key", options.key);
      if (SSL_CTX_use_PrivateKey_file(m_ctx, options.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
          SSL_CTX_check_private_key(m_ctx) != 1) {
        std::string reason = openssl_reason();
        throw bad_file(
            "--tls-key", options.key,
            reason == "key values mismatch"
                ? fmt::format("is not the key of the certificate in --tls-cert {}", printable(options.cert))
                : fmt::format("no usable private key in it (PEM, not encrypted): {}", reason));
      }
    }
  } catch (...) {
    SSL_CTX_free(m_ctx);
    throw;
  }
}

TlsContext::~TlsContext() {
  SSL_CTX_free(m_ctx);
}

std::shared_ptr<const TlsContext> tls_context(const TlsOptions& options) {
  // Keyed by everything but the server name (checked per connection). Never
  // freed: OpenSSL cleans up after itself at exit (atexit, registered after
  // this map was made), and a context freed by a static destructor after that
  // would touch freed memory.
  using Key = std::tuple<std::string, std::string, std::string, bool>;
  static std::mutex mutex;
  static auto& cache = *new std::map<Key, std::shared_ptr<const TlsContext>>();
  TlsOptions key_options = options;
  key_options.server_name.clear();
  auto key = std::make_tuple(options.ca_file, options.cert, options.key, options.insecure);
  std::lock_guard lock(mutex);
  auto& slot = cache[key];
  if (!slot) {
    try {
      slot = std::make_shared<const TlsContext>(key_options);
    } catch (...) {
      cache.erase(key);
      throw;
    }
  }
  return slot;
}

TlsSession::TlsSession(std::shared_ptr<const TlsContext> context, int fd, const std::string& verify_name)
    : m_context(std::move(context)) {
  ERR_clear_error();
  m_ssl = SSL_new(m_context->native());
  BIO* bio = m_ssl != nullptr ? BIO_new(socket_method()) : nullptr;
  if (bio == nullptr) {
    SSL_free(m_ssl);
    throw Error(Outcome::failed, fmt::format("cannot set up TLS: {}", openssl_reason()));
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  SSL_set_bio(m_ssl, bio, bio);
  bool ip = is_ip_address(verify_name);
  if (!ip) {
    SSL_set_tlsext_host_name(m_ssl, verify_name.c_str()); // SNI carries names, never addresses
  }
  if (!m_context->options().insecure) {
    int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(m_ssl), verify_name.c_str())
                : SSL_set1_host(m_ssl, verify_name.c_str());
    if (ok != 1) {
      SSL_free(m_ssl);
      throw Error(Outcome::bad_setting, fmt::format("cannot verify TLS certificates against '{}': {}",
                                                    printable(verify_name), openssl_reason()));
    }
    SSL_set_hostflags(m_ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  }
  SSL_set_connect_state(m_ssl);
}

TlsSession::~TlsSession() {
  // No close_notify: the socket is closed right after, and a server that has
  // stopped reading must not make the close wait.
  SSL_free(m_ssl);
}

void TlsSession::fail(int ssl_error, const char* doing, bool before_data) {
  int saved_errno = errno;
  if (before_data && ssl_error == SSL_ERROR_SYSCALL && !m_received_data) {
    // A TLS 1.3 server that refuses the client's certificate does so after the
    // client's handshake is complete: its alert is waiting to be read when the
    // first request's send meets the reset that followed it.
    ERR_clear_error();
    char byte = 0;
    int n = SSL_read(m_ssl, &byte, 1);
    if (n <= 0 && SSL_get_error(m_ssl, n) == SSL_ERROR_SSL) {
      ssl_error = SSL_ERROR_SSL;
    } else {
      ERR_clear_error();
      errno = saved_errno;
    }
  }
  // Only a TLS failure (an alert, a bad record) before any data means the
  // server refused the session: Redis never saw a request on it. A reset is
  // as ambiguous as on a plain socket.
  before_data = before_data && (ssl_error == SSL_ERROR_SSL || !m_handshake_done);
  std::string reason = openssl_reason();
  if (reason.empty()) {
    reason = ssl_error == SSL_ERROR_SYSCALL && saved_errno != 0 ? std::strerror(saved_errno)
                                                                : "connection closed by the server";
  }
  if (before_data) {
    long verify = SSL_get_verify_result(m_ssl);
    if (verify != X509_V_OK) {
      reason += fmt::format(" ({})", X509_verify_cert_error_string(verify));
    }
    throw RedisError(RedisErrorKind::connect,
                     fmt::format("TLS handshake failed: {}{}", reason, hint_for(reason)));
  }
  bool reset = ssl_error == SSL_ERROR_SYSCALL && (saved_errno == ECONNRESET || saved_errno == EPIPE);
  throw RedisError(reset ? RedisErrorKind::closed : RedisErrorKind::io,
                   fmt::format("{}: TLS: {}", doing, reason));
}

TlsWait TlsSession::handshake() {
  ERR_clear_error();
  int rc = SSL_connect(m_ssl);
  if (rc == 1) {
    m_handshake_done = true;
    return 0;
  }
  int err = SSL_get_error(m_ssl, rc);
  if (err == SSL_ERROR_WANT_READ) {
    return POLLIN;
  }
  if (err == SSL_ERROR_WANT_WRITE) {
    return POLLOUT;
  }
  fail(err, "handshake", true);
}

long TlsSession::read(char* buf, std::size_t size, TlsWait& wait) {
  ERR_clear_error();
  errno = 0;
  int n = SSL_read(m_ssl, buf, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) {
    m_received_data = true;
    return n;
  }
  int err = SSL_get_error(m_ssl, n);
  switch (err) {
  case SSL_ERROR_WANT_READ:
    wait = POLLIN;
    return -1;
  case SSL_ERROR_WANT_WRITE:
    wait = POLLOUT;
    return -1;
  case SSL_ERROR_ZERO_RETURN:
    return 0;
  case SSL_ERROR_SYSCALL:
    if (ERR_peek_error() == 0 && errno == 0) {
      return 0; // EOF without close_notify
    }
    [[fallthrough]];
  default:
    fail(err, "receive failed", !m_received_data);
  }
}

long TlsSession::write(const char* data, std::size_t size, TlsWait& wait) {
  ERR_clear_error();
  errno = 0;
  int n = SSL_write(m_ssl, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) {
    return n;
  }
  int err = SSL_get_error(m_ssl, n);
  if (err == SSL_ERROR_WANT_READ) {
    wait = POLLIN;
    return -1;
  }
  if (err == SSL_ERROR_WANT_WRITE) {
    wait = POLLOUT;
    return -1;
  }
  fail(err, "send failed", !m_received_data);
}

std::string TlsSession::describe() const {
  const char* cipher = SSL_get_cipher_name(m_ssl);
  return fmt::format("{} {}", SSL_get_version(m_ssl), cipher != nullptr ? cipher : "");
}

bool TlsSession::has_pending() const {
  return SSL_pending(m_ssl) > 0;
}

bool TlsSession::idle_records_only() {
  ERR_clear_error();
  char byte = 0;
  int n = SSL_peek(m_ssl, &byte, 1);
  if (n > 0) {
    return false; // data nobody asked for: the connection's state is unknown
  }
  bool ok = SSL_get_error(m_ssl, n) == SSL_ERROR_WANT_READ;
  ERR_clear_error();
  return ok;
}

} // namespace rlock::redis
