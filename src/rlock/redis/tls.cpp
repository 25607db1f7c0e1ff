// TLS over rlock's own sockets with mbed TLS: the trust store, client
// certificates, verification, a session's non-blocking handshake and I/O.

#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/tls.hpp>

#include <fmt/format.h>

// mbed TLS, not OpenSSL: linked into the binary, OpenSSL's tables cost
// 24 000 relative relocations applied at every start, TLS or not (~115 page
// faults and a third of an uncontended `run` here); mbed TLS's cost ~800
// (bench/README.md, "Start-up budget").
#include <mbedtls/asn1.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_internal.h> // mbedtls_ssl_read_record: the alert after a reset
#include <mbedtls/x509_crt.h>

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
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace rlock::redis {

struct TlsContext::State {
  mbedtls_x509_crt ca;
  mbedtls_x509_crt cert;
  mbedtls_pk_context key;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg; // thread-safe (MBEDTLS_THREADING_C)
  bool has_cert = false;
  // mbed TLS caches a curve's precomputed points inside the parsed key or CA
  // certificate when it first uses them (ecp_mul_comb), so two handshakes
  // that use the shared certificates at once would race: each handshake step
  // (non-blocking: it never waits for the socket) holds this.
  std::mutex handshake;

  State() {
    mbedtls_x509_crt_init(&ca);
    mbedtls_x509_crt_init(&cert);
    mbedtls_pk_init(&key);
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
  }
  ~State() {
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    mbedtls_pk_free(&key);
    mbedtls_x509_crt_free(&cert);
    mbedtls_x509_crt_free(&ca);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

struct TlsSession::State {
  mbedtls_ssl_config conf;
  mbedtls_ssl_context ssl;
  int fd = -1;
  int last_errno = 0;       // of the socket call that failed
  bool ip = false;          // verify_name is an address: checked against IP SANs here
  bool ip_mismatch = false; // ... and none matched
  unsigned char address[16] = {};
  std::size_t address_len = 0;
  std::size_t pending_write = 0; // the length of a write that said WANT_WRITE: sent again as it was

  State() {
    mbedtls_ssl_config_init(&conf);
    mbedtls_ssl_init(&ssl);
  }
  ~State() {
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_config_free(&conf);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

namespace {

std::string mbedtls_reason(int rc) {
  if (rc >= 0) {
    return "nothing could be parsed";
  }
  char buf[200];
  mbedtls_strerror(rc, buf, sizeof buf);
  return buf;
}

Error bad_file(std::string_view flag, const std::string& path, std::string_view why) {
  return Error(Outcome::bad_setting, fmt::format("{}: {}: {}", flag, printable(path), why));
}

// A readable regular file, or a usage error saying why not.
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

bool readable(const char* path) {
  return ::access(path, R_OK) == 0;
}

// The system's trust store, where OpenSSL (and so redis-cli) looks: the
// bundle SSL_CERT_FILE or /usr/lib/ssl/cert.pem (Debian: ca-certificates'
// /etc/ssl/certs/ca-certificates.crt), else each file of SSL_CERT_DIR or
// /usr/lib/ssl/certs. Certificates that do not parse are skipped; none at all
// makes every verification fail ("unable to get local issuer certificate").
void load_system_store(mbedtls_x509_crt& ca) {
  const char* file = std::getenv("SSL_CERT_FILE");
  if (file == nullptr || *file == '\0') {
    file = "/usr/lib/ssl/cert.pem";
  }
  if (readable(file)) {
    mbedtls_x509_crt_parse_file(&ca, file);
  }
  const char* dirs = std::getenv("SSL_CERT_DIR");
  if (ca.version != 0 && (dirs == nullptr || *dirs == '\0')) {
    return; // the bundle is the whole store
  }
  std::string_view rest = dirs != nullptr && *dirs != '\0' ? dirs : "/usr/lib/ssl/certs";
  for (;;) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty() && readable(dir.c_str())) {
      mbedtls_x509_crt_parse_path(&ca, dir.c_str());
    }
    if (colon == std::string_view::npos) {
      break;
    }
    rest = rest.substr(colon + 1);
  }
}

// The socket under a session: plain recv/send on the non-blocking socket,
// sending with MSG_NOSIGNAL (a server that closed the connection would kill
// rlock with SIGPIPE, which rlock does not ignore outside `run`).
int bio_send(void* ctx, const unsigned char* data, std::size_t len) {
  auto& st = *static_cast<TlsSession::State*>(ctx);
  ssize_t n = 0;
  do {
    n = ::send(st.fd, data, len, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    return static_cast<int>(n);
  }
  st.last_errno = errno;
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    return MBEDTLS_ERR_SSL_WANT_WRITE;
  }
  return errno == EPIPE || errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
}

int bio_recv(void* ctx, unsigned char* buf, std::size_t len) {
  auto& st = *static_cast<TlsSession::State*>(ctx);
  ssize_t n = 0;
  do {
    n = ::recv(st.fd, buf, len, 0);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    return static_cast<int>(n); // 0: the end of the stream
  }
  st.last_errno = errno;
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    return MBEDTLS_ERR_SSL_WANT_READ;
  }
  return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

// Whether the certificate's subjectAltName extension lists this IP address
// (an iPAddress entry: [7] OCTET STRING of 4 or 16 bytes). mbed TLS 2.28
// keeps only the DNS and other names of that extension, so its raw DER is
// walked here; anything malformed is no match.
bool has_ip_san(const mbedtls_x509_crt& crt, const unsigned char* address, std::size_t address_len) {
  if (crt.v3_ext.p == nullptr || crt.v3_ext.len == 0) {
    return false;
  }
  unsigned char* p = crt.v3_ext.p;
  const unsigned char* end = crt.v3_ext.p + crt.v3_ext.len;
  std::size_t len = 0;
  // Extensions ::= SEQUENCE OF Extension
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0) {
    return false;
  }
  end = p + len;
  while (p < end) {
    // Extension ::= SEQUENCE { extnID OID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }
    if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0) {
      return false;
    }
    unsigned char* ext_end = p + len;
    std::size_t oid_len = 0;
    if (mbedtls_asn1_get_tag(&p, ext_end, &oid_len, MBEDTLS_ASN1_OID) != 0) {
      return false;
    }
    bool san = oid_len == MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME) &&
               std::memcmp(p, MBEDTLS_OID_SUBJECT_ALT_NAME, oid_len) == 0;
    p += oid_len;
    if (!san) {
      p = ext_end;
      continue;
    }
    int critical = 0;
    mbedtls_asn1_get_bool(&p, ext_end, &critical); // optional
    std::size_t value_len = 0;
    if (mbedtls_asn1_get_tag(&p, ext_end, &value_len, MBEDTLS_ASN1_OCTET_STRING) != 0) {
      return false;
    }
    const unsigned char* value_end = p + value_len;
    std::size_t names_len = 0;
    if (mbedtls_asn1_get_tag(&p, value_end, &names_len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) !=
        0) {
      return false;
    }
    const unsigned char* names_end = p + names_len;
    while (p < names_end) {
      unsigned char tag = *p++;
      std::size_t name_len = 0;
      if (mbedtls_asn1_get_len(&p, names_end, &name_len) != 0) {
        return false;
      }
      if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_X509_SAN_IP_ADDRESS) && name_len == address_len &&
          std::memcmp(p, address, address_len) == 0) {
        return true;
      }
      p += name_len;
    }
    return false; // one subjectAltName extension per certificate
  }
  return false;
}

// For an address: the server's certificate must name it in an IP SAN (as
// OpenSSL's X509_VERIFY_PARAM_set1_ip); mbed TLS checks the chain.
int verify_ip(void* ctx, mbedtls_x509_crt* crt, int depth, uint32_t* flags) {
  auto& st = *static_cast<TlsSession::State*>(ctx);
  if (depth == 0 && !has_ip_san(*crt, st.address, st.address_len)) {
    st.ip_mismatch = true;
    *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
  }
  return 0;
}

const char* alert_name(unsigned char alert) {
  switch (alert) {
  case MBEDTLS_SSL_ALERT_MSG_UNEXPECTED_MESSAGE: return "unexpected message";
  case MBEDTLS_SSL_ALERT_MSG_BAD_RECORD_MAC: return "bad record mac";
  case MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE: return "handshake failure";
  case MBEDTLS_SSL_ALERT_MSG_BAD_CERT: return "bad certificate";
  case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT: return "unsupported certificate";
  case MBEDTLS_SSL_ALERT_MSG_CERT_REVOKED: return "certificate revoked";
  case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED: return "certificate expired";
  case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN: return "certificate unknown";
  case MBEDTLS_SSL_ALERT_MSG_ILLEGAL_PARAMETER: return "illegal parameter";
  case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA: return "unknown ca";
  case MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED: return "access denied";
  case MBEDTLS_SSL_ALERT_MSG_DECODE_ERROR: return "decode error";
  case MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR: return "decrypt error";
  case MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION: return "protocol version";
  case MBEDTLS_SSL_ALERT_MSG_INSUFFICIENT_SECURITY: return "insufficient security";
  case MBEDTLS_SSL_ALERT_MSG_INTERNAL_ERROR: return "internal error";
  case MBEDTLS_SSL_ALERT_MSG_INAPROPRIATE_FALLBACK: return "inappropriate fallback";
  case MBEDTLS_SSL_ALERT_MSG_USER_CANCELED: return "user canceled";
  case MBEDTLS_SSL_ALERT_MSG_UNRECOGNIZED_NAME: return "unrecognized name";
  case 109: return "missing extension";
  case 116: return "certificate required";
  default: return nullptr;
  }
}

// What the verification of the server's certificate found, in OpenSSL's
// words where it has them (people search for those).
std::string verify_problem(uint32_t flags, bool ip_mismatch) {
  if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) {
    return "unable to get local issuer certificate";
  }
  if (flags & MBEDTLS_X509_BADCERT_EXPIRED) {
    return "certificate has expired";
  }
  if (flags & MBEDTLS_X509_BADCERT_FUTURE) {
    return "certificate is not yet valid";
  }
  if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) {
    return ip_mismatch ? "IP address mismatch" : "hostname mismatch";
  }
  char buf[512];
  int n = mbedtls_x509_crt_verify_info(buf, sizeof buf, "", flags);
  std::string info = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("unknown problem");
  if (auto nl = info.find('\n'); nl != std::string::npos) {
    info.resize(nl);
  }
  return info;
}

} // namespace

TlsContext::TlsContext(const TlsOptions& options) : m_options(options), m_state(std::make_unique<State>()) {
  State& st = *m_state;
  static constexpr unsigned char k_personal[] = "rlock";
  if (int rc = mbedtls_ctr_drbg_seed(&st.drbg, mbedtls_entropy_func, &st.entropy, k_personal, sizeof k_personal);
      rc != 0) {
    throw Error(Outcome::failed, fmt::format("cannot set up TLS: {}", mbedtls_reason(rc)));
  }
  if (!options.insecure) {
    if (!options.ca_file.empty()) {
      check_readable("--tls-ca-file", options.ca_file);
      int rc = mbedtls_x509_crt_parse_file(&st.ca, options.ca_file.c_str());
      if (st.ca.version == 0) { // not one certificate parsed
        throw bad_file("--tls-ca-file", options.ca_file,
                       fmt::format("no CA certificate in it (PEM expected): {}", mbedtls_reason(rc)));
      }
    } else {
      load_system_store(st.ca);
    }
  }
  if (!options.cert.empty()) {
    check_readable("--tls-cert", options.cert);
    int rc = mbedtls_x509_crt_parse_file(&st.cert, options.cert.c_str());
    if (st.cert.version == 0) {
      throw bad_file("--tls-cert", options.cert,
                     fmt::format("no certificate in it (PEM expected): {}", mbedtls_reason(rc)));
    }
    check_readable("--tls-key", options.key);
    // No pass phrase: an encrypted key is refused, never asked for.
    rc = mbedtls_pk_parse_keyfile(&st.key, options.key.c_str(), nullptr);
    if (rc != 0) {
      throw bad_file("--tls-key", options.key,
                     fmt::format("no usable private key in it (PEM, not encrypted): {}", mbedtls_reason(rc)));
    }
    if (mbedtls_pk_check_pair(&st.cert.pk, &st.key) != 0) {
      throw bad_file("--tls-key", options.key,
                     fmt::format("is not the key of the certificate in --tls-cert {}", printable(options.cert)));
    }
    st.has_cert = true;
  }
}

TlsContext::~TlsContext() = default;

std::shared_ptr<const TlsContext> tls_context(const TlsOptions& options) {
  // Keyed by everything but the server name (checked per connection). Never
  // freed: a context freed by a static destructor could still be in use by a
  // thread that outlives main's return.
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
    : m_context(std::move(context)), m_state(std::make_unique<State>()) {
  State& st = *m_state;
  TlsContext::State& shared = m_context->state();
  st.fd = fd;
  int rc = mbedtls_ssl_config_defaults(&st.conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                       MBEDTLS_SSL_PRESET_DEFAULT);
  if (rc != 0) {
    throw Error(Outcome::failed, fmt::format("cannot set up TLS: {}", mbedtls_reason(rc)));
  }
  mbedtls_ssl_conf_min_version(&st.conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3); // TLS 1.2
  mbedtls_ssl_conf_rng(&st.conf, mbedtls_ctr_drbg_random, &shared.drbg);
  bool insecure = m_context->options().insecure;
  mbedtls_ssl_conf_authmode(&st.conf, insecure ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
  if (!insecure) {
    mbedtls_ssl_conf_ca_chain(&st.conf, &shared.ca, nullptr);
  }
  if (shared.has_cert) {
    mbedtls_ssl_conf_own_cert(&st.conf, &shared.cert, &shared.key);
  }
  if ((rc = mbedtls_ssl_setup(&st.ssl, &st.conf)) != 0) {
    throw Error(Outcome::failed, fmt::format("cannot set up TLS: {}", mbedtls_reason(rc)));
  }
  mbedtls_ssl_set_bio(&st.ssl, &st, bio_send, bio_recv, nullptr);
  if (inet_pton(AF_INET, verify_name.c_str(), st.address) == 1) {
    st.address_len = 4;
  } else if (inet_pton(AF_INET6, verify_name.c_str(), st.address) == 1) {
    st.address_len = 16;
  }
  st.ip = st.address_len != 0;
  if (st.ip) {
    // SNI carries names, never addresses; the address is checked against the
    // certificate's IP SANs by verify_ip.
    if (!insecure) {
      mbedtls_ssl_set_verify(&st.ssl, verify_ip, &st);
    }
  } else if ((rc = mbedtls_ssl_set_hostname(&st.ssl, verify_name.c_str())) != 0) {
    // The name is sent as SNI and checked against the certificate's DNS SANs
    // (its CN without any); a wildcard stands for one whole leftmost label.
    throw Error(Outcome::bad_setting, fmt::format("cannot verify TLS certificates against '{}': {}", printable(verify_name),
                                 mbedtls_reason(rc)));
  }
}

TlsSession::~TlsSession() = default; // no close_notify: the socket is closed right after

void TlsSession::fail(int rc, const char* doing, bool before_data) {
  State& st = *m_state;
  int saved_errno = st.last_errno;
  if (before_data && !m_received_data &&
      (rc == MBEDTLS_ERR_NET_CONN_RESET || rc == MBEDTLS_ERR_NET_SEND_FAILED)) {
    // A server that refuses the session (a client certificate it wants and
    // was not given) sends its alert and closes: the alert is waiting to be
    // read when the client's next send meets the reset that followed it.
    unsigned char byte = 0;
    int again = m_handshake_done ? mbedtls_ssl_read(&st.ssl, &byte, 1) : mbedtls_ssl_read_record(&st.ssl, 1);
    if (again == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
      rc = again;
    }
  }
  bool net = rc == MBEDTLS_ERR_NET_CONN_RESET || rc == MBEDTLS_ERR_NET_SEND_FAILED ||
             rc == MBEDTLS_ERR_NET_RECV_FAILED || rc == MBEDTLS_ERR_SSL_CONN_EOF;
  // Only a TLS failure (an alert, a bad record) before any data means the
  // server refused the session: Redis never saw a request on it. A reset is
  // as ambiguous as on a plain socket.
  before_data = before_data && (!net || !m_handshake_done);
  std::string reason;
  std::string hint;
  if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
    reason = fmt::format("certificate verify failed ({})",
                         verify_problem(mbedtls_ssl_get_verify_result(&st.ssl), st.ip_mismatch));
  } else if (rc == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    unsigned char alert = st.ssl.in_msg != nullptr ? st.ssl.in_msg[1] : 0;
    const char* name = alert_name(alert);
    std::string what = name != nullptr ? name : fmt::format("number {}", alert);
    // Asked for a client certificate and given none: a TLS 1.2 server says
    // only "handshake failure" (TLS 1.3: "certificate required").
    if (alert == 116 || (st.ssl.client_auth != 0 && !m_context->state().has_cert &&
                         alert == MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE)) {
      reason = fmt::format("certificate required (the server's alert: {})", what);
      hint = "; the server wants a client certificate (--tls-cert, --tls-key)";
    } else {
      reason = fmt::format("the server's alert: {}", what);
    }
  } else if (rc == MBEDTLS_ERR_SSL_INVALID_RECORD || rc == MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION ||
             rc == MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE || rc == MBEDTLS_ERR_SSL_BAD_HS_SERVER_HELLO) {
    reason = fmt::format("not a TLS answer: {}", mbedtls_reason(rc));
    hint = m_handshake_done ? "" : "; is the server speaking TLS on that port?";
  } else if (net && !m_handshake_done && st.ssl.client_auth != 0 && !m_context->state().has_cert) {
    reason = "certificate required (the server closed the connection after asking for one)";
    hint = "; the server wants a client certificate (--tls-cert, --tls-key)";
  } else if (net) {
    reason = rc == MBEDTLS_ERR_SSL_CONN_EOF || saved_errno == 0 ? "connection closed by the server"
                                                                : std::strerror(saved_errno);
  } else {
    reason = mbedtls_reason(rc);
  }
  if (before_data) {
    throw RedisError(RedisErrorKind::connect, fmt::format("TLS handshake failed: {}{}", reason, hint));
  }
  bool reset = rc == MBEDTLS_ERR_NET_CONN_RESET;
  throw RedisError(reset ? RedisErrorKind::closed : RedisErrorKind::io, fmt::format("{}: TLS: {}", doing, reason));
}

TlsWait TlsSession::handshake() {
  int rc = 0;
  {
    std::lock_guard lock(m_context->state().handshake);
    rc = mbedtls_ssl_handshake(&m_state->ssl);
  }
  if (rc == 0) {
    m_handshake_done = true;
    return 0;
  }
  if (rc == MBEDTLS_ERR_SSL_WANT_READ) {
    return POLLIN;
  }
  if (rc == MBEDTLS_ERR_SSL_WANT_WRITE) {
    return POLLOUT;
  }
  fail(rc, "handshake", true);
}

long TlsSession::read(char* buf, std::size_t size, TlsWait& wait) {
  int n = mbedtls_ssl_read(&m_state->ssl, reinterpret_cast<unsigned char*>(buf), std::min<std::size_t>(size, INT_MAX));
  if (n > 0) {
    m_received_data = true;
    return n;
  }
  switch (n) {
  case MBEDTLS_ERR_SSL_WANT_READ:
    wait = POLLIN;
    return -1;
  case MBEDTLS_ERR_SSL_WANT_WRITE:
    wait = POLLOUT;
    return -1;
  case 0:
  case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
  case MBEDTLS_ERR_SSL_CONN_EOF:
    return 0; // close_notify, or EOF without it
  default:
    fail(n, "receive failed", !m_received_data);
  }
}

long TlsSession::write(const char* data, std::size_t size, TlsWait& wait) {
  State& st = *m_state;
  // After WANT_WRITE mbed TLS must be called again with the same length (the
  // record is made already; it sends what is left and answers that length).
  std::size_t len = st.pending_write != 0 ? std::min(st.pending_write, size) : std::min<std::size_t>(size, 16384);
  int n = mbedtls_ssl_write(&st.ssl, reinterpret_cast<const unsigned char*>(data), len);
  if (n > 0) {
    st.pending_write = 0;
    return n;
  }
  if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE) {
    st.pending_write = len;
    wait = n == MBEDTLS_ERR_SSL_WANT_READ ? POLLIN : POLLOUT;
    return -1;
  }
  fail(n, "send failed", !m_received_data);
}

std::string TlsSession::describe() const {
  const char* cipher = mbedtls_ssl_get_ciphersuite(&m_state->ssl);
  return fmt::format("{} {}", mbedtls_ssl_get_version(&m_state->ssl), cipher != nullptr ? cipher : "");
}

bool TlsSession::has_pending() const {
  return mbedtls_ssl_get_bytes_avail(&m_state->ssl) > 0 || mbedtls_ssl_check_pending(&m_state->ssl) != 0;
}

bool TlsSession::idle_records_only() {
  // A read of nothing processes the records that arrived: WANT_READ means
  // none of them carried data.
  unsigned char byte = 0;
  int n = mbedtls_ssl_read(&m_state->ssl, &byte, 0);
  return n == MBEDTLS_ERR_SSL_WANT_READ && mbedtls_ssl_get_bytes_avail(&m_state->ssl) == 0;
}

} // namespace rlock::redis
