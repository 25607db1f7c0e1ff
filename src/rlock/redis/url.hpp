#pragma once

// Redis URLs and what they name: endpoints, TLS options, the one resolver.

#include <rlock/core/defaults.hpp>

#include <netdb.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlock::redis {

// A host and port of a TCP server.
struct HostPort {
  std::string host;
  int port = 0;
  bool operator==(const HostPort&) const = default;
};

// How a TLS endpoint (rediss://, rediss-sentinel://) is verified and what it
// is shown. Empty strings are the defaults.
struct TlsOptions {
  std::string ca_file;     // --tls-ca-file; empty: the system's trust store
  std::string cert;        // --tls-cert: client certificate (PEM, may hold the chain)
  std::string key;         // --tls-key: its private key (PEM, not encrypted)
  std::string server_name; // --tls-server-name: the name (or IP) every node's
                           // certificate must carry; empty: the host connected to
  bool insecure = false;   // --tls-insecure: no verification at all
  bool operator==(const TlsOptions&) const = default;
};

// Where a Redis server is and how to log in. Parsed from a URL. A Sentinel URL
// (non-empty `sentinels`) names the sentinels and the master's name instead of
// the server: redis::Client asks the sentinels for the primary and connects to
// it with this endpoint's user, password, db and TLS.
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
  // redis-cluster://h1:p1,h2:p2: the seed nodes of a Redis Cluster, tried in
  // turn for the slot map (host and port are the first's). Empty otherwise (a
  // redis:// URL of a cluster node is one seed, found to be a cluster by its HELLO).
  std::vector<HostPort> seeds;
  // Set for rediss:// and rediss-sentinel:// (sentinels and primary alike):
  // every connection made from this endpoint, and from at(), speaks TLS.
  std::optional<TlsOptions> tls;
  // Ask `INFO server` with the HELLO of every connection made from this
  // endpoint (same round trip), so ServerInfo::run_id tells which server it
  // is: set for Redlock masters, where one server counted twice is a fake vote.
  bool identify = false;
  // Ask INFO replication with the HELLO of every connection made from this endpoint (same
  // round trip) to learn how many replicas the primary has: set unless
  // --sync-replicas (or RLOCK_SYNC_REPLICAS) is given, for the default
  // replica sync of acquire and renew (required_sync in redis/client.hpp).
  bool learn_replicas = false;
  // With learn_replicas: ask CLUSTER NODES too, in the same round trip (the
  // replicas the cluster may promote, connected or not: redis::cluster_view).
  // Set by redis::Client for the nodes of a deployment it knows is a Cluster.
  bool cluster_view = false;

  bool is_sentinel() const { return !sentinels.empty(); }
  bool is_cluster() const { return !seeds.empty(); }
  // The same login, db and TLS on another server (a cluster node, a
  // sentinel, the primary a sentinel named): no sentinels, no seeds.
  Endpoint at(const HostPort& node) const;
  HostPort host_port() const { return {host, port}; }

  // "redis://user@host:port/db" ("rediss://" with TLS), "unix:///path?db=N",
  // "redis-sentinel://user@h1:p1,h2:p2/MASTER/db" ("rediss-sentinel://") or
  // "redis-cluster://user@h1:p1,h2:p2" ("rediss-cluster://"), never the password.
  std::string display() const;
};

// Parses redis://[[user]:password@]host[:port][/db] (IPv6 as [::1]),
// unix:///path[?db=N],
// redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[/db]
// (sentinel port 26379 by default; the login and db are the primary's) and
// redis-cluster://[[user]:password@]host[:port][,host[:port]...] (the seed
// nodes of a Redis Cluster, port 6379 by default; a cluster has database 0
// only, so a path other than "/" or "/0" is refused). User and password are
// percent-decoded. rediss://, rediss-sentinel:// and rediss-cluster:// are the
// same with TLS (`tls` set to the default TlsOptions: the caller fills in the
// --tls-* options; port 6379 and 26379 by default, as redis-cli). Throws
// UsageError for a malformed URL.
Endpoint parse_url(std::string_view url);

// Where the password of a URL's userinfo is in `text` ("redis://u:PW@h"):
// offset and length, or nothing when it has none.
std::optional<std::pair<std::size_t, std::size_t>> password_span(std::string_view url);

// `url` as the user wrote it, without the password of its userinfo
// ("redis://u:pw@h/1" -> "redis://u@h/1", "redis://:pw@h" -> "redis://h"): for
// handing the URL on (to CMD, to a record) without the secret.
std::string without_password(std::string_view url);

// Which server an endpoint names, by what it says (pure, nothing resolved):
// two endpoints with the same key name the same server. The db, user,
// password and TLS options are left out (`/1` and `/2` of one server are one
// server), the host is in lower case: "tcp:HOST:PORT", "unix:PATH",
// "sentinel:MASTER@H1:P1,H2:P2" (sentinels sorted), "cluster:H1:P1,H2:P2"
// (seeds sorted).
std::string server_key(const Endpoint& endpoint);

// The one name lookup: `host` (a name or a numeric address) and `port` as the
// host's getaddrinfo answers them, through its nsswitch.conf (files, dns,
// myhostname, resolve, mdns...: the C library is linked dynamically, so the
// host's modules load into the libc.so.6 they were built for), TCP only, every
// address in the order given. A name that does not resolve throws
// RedisError(connect) "cannot resolve HOST: why" (exit 69).
struct AddrinfoDeleter {
  void operator()(addrinfo* list) const;
};
using AddressList = std::unique_ptr<addrinfo, AddrinfoDeleter>;
AddressList resolve_tcp(const std::string& host, int port);

// The addresses at which the endpoint's server is reached, resolved now
// (resolve_tcp, as Connection resolves): "IP:PORT" for TCP (every address of
// the name; numeric, IPv6 as [::1]:PORT); "unix:DEV:INODE" of the socket file
// (its server_key when it cannot be stat'ed); for a Sentinel URL
// "sentinel:MASTER@IP:PORT" per sentinel address; for a Cluster URL "IP:PORT"
// of every seed (a cluster named twice, or beside one of its nodes, shares
// one). A name that does not resolve gives its server_key (it will not be
// reached either).
std::vector<std::string> server_addresses(const Endpoint& endpoint);

// The first two of several servers that share an address (`addresses[i]`: what
// server_addresses or server_key said of the i-th): the same server named
// twice. Pure.
struct SameServer {
  std::size_t first = 0;
  std::size_t second = 0;
  std::string address; // one they share
};
std::optional<SameServer> same_server(const std::vector<std::vector<std::string>>& addresses);

// The one-line message of the usage error (64) for two URLs of one server:
// "--url: A and B are the same server[ (ADDRESS)]; a Redlock needs independent
// masters, each counted once". No password.
std::string same_server_message(const Endpoint& first, const Endpoint& second, const std::string& address);

// The URL list to use: the --url flags if any, else RLOCK_URL (comma-separated:
// a comma starts a new URL only where a scheme follows, so a Sentinel or
// Cluster URL's host list stays whole), else REDIS_URL, else the default. `env` looks a variable up (nullptr = unset).
std::vector<std::string> choose_urls(const std::vector<std::string>& flags,
                                     const char* (*env)(const char*));

} // namespace rlock::redis
