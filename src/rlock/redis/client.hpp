#pragma once

// redis::Client, the deployment behind a URL, and replica sync (WAIT) rules.

#include <rlock/core/defaults.hpp>
#include <rlock/redis/connection.hpp>
#include <rlock/redis/script.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::redis {

// --sync-replicas N[/DUR]: after a write, WAIT until N replicas acknowledge it,
// at most DUR. count 0 and not `automatic`: no WAIT (what every request other
// than acquire and renew passes).
//
// `automatic` (the default of acquire and renew, issue 24; `--sync-replicas 0`
// or RLOCK_SYNC_REPLICAS=0 turns it off): the rule of required_sync() decides
// per primary from the replicas it has; count is then 1 and timeout
// automatic_sync_timeout(ttl).
struct SyncReplicas {
  int count = 0;
  Millis timeout = k_default_sync_timeout;
  bool automatic = false;

  // The default of acquire and renew for a lock of lease `ttl`.
  static SyncReplicas automatic_for(Millis ttl);
};

// How long the default waits for a replica's acknowledgement: a tenth of the
// lease, at most 1 s and at least 1 ms (WAIT 0 would wait forever). Pure.
Millis automatic_sync_timeout(Millis ttl);

// The one decision of issue 24: what WAIT a write of a request asking `asked`
// needs on a primary with `replicas` connected replicas (INFO replication's
// connected_slaves, learnt with the
// connection's handshake and refreshed with later requests; nullopt: not known
// yet, or INFO refused). Explicit (--sync-replicas N[/DUR], N > 0): as asked;
// off (count 0, not automatic): none; automatic: 1 acknowledgement within the
// automatic timeout when replicas > 0, none when 0 or unknown. A count of 0
// is a fact of the moment: a replica that attaches later is seen by the next
// request that learns the count again (at most k_replicas_refresh later). Pure.
SyncReplicas required_sync(const SyncReplicas& asked, std::optional<long long> replicas);

// Sentinel: the primary a SENTINEL GET-MASTER-ADDR-BY-NAME reply names (two
// strings: a host of 1 to 255 bytes and a port); nullopt for anything else
// (nil, the sentinel does not know the name, is the caller's to tell). Pure.
std::optional<HostPort> sentinel_master(const Reply& reply);

// Sentinel: the replicas a SENTINEL SLAVES reply lists that report the replica
// role and are neither down (s_down, o_down) nor disconnected: those a failover
// may promote, whether or not their link to the primary is up (an old primary
// not reconfigured yet still reports master: not counted). nullopt for
// anything else. Pure.
std::optional<long long> sentinel_replicas(const Reply& reply);

// The replies of a routed script request.
struct EvalReply {
  Reply reply;
  long long acked = -1; // replicas that acknowledged (WAIT), -1 when no WAIT was needed
  SyncReplicas required; // what required_sync() asked of this write (count 0: no WAIT)
  std::string node; // where it ran, when the deployment chose (a Cluster's primary, Sentinel's); else ""
  // When the send that got this answer went out (after finding the node and
  // connecting: nothing before it, a seed's silence, a LATE send, counts).
  TimePoint sent{};
  // The earliest earlier send of the same request that got no answer (it may
  // have been applied, and this send answered from its latch): run_script's.
  std::optional<TimePoint> earlier_unanswered;
};

// The one way rlock talks to a deployment: a standalone server, a Redis Cluster
// (detected from the server's HELLO or its first MOVED) or a primary found
// through Sentinel. Routes each request to the primary that serves its key's
// hash slot and follows the deployment when it changes:
//
//   MOVED      the slot map is loaded again (CLUSTER SLOTS) and the request sent
//              to the node MOVED named: it was not applied where it was refused
//   ASK        ASKING + the same request, once, on the node ASK named
//   READONLY   a replica answered (failover): Sentinel is asked again for the
//              primary, a Cluster's map loaded again, and the request sent there
//   socket     the node is forgotten (the next request asks the sentinels again /
//              loads the map again) and the error goes to the caller, whose
//              RetryPolicy decides whether to send it again
//
// At most k_max_hops redirections per request. Not thread-safe: one per thread
// (fresh() gives another thread its own, knowing what this one learnt).
class Client {
public:
  static constexpr int k_max_hops = 5;
  // An automatic sync asks INFO replication again (riding with the request) when the
  // primary's replica count is older than this (a `run`'s renewals).
  static constexpr Millis k_replicas_refresh{1000};

  Client(Endpoint target, Timeouts timeouts);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  // The same target and what is known of its topology, without connections;
  // with `cap`, no connect or I/O timeout of the copy is longer than it.
  Client fresh(std::optional<Millis> cap = std::nullopt) const;

  // Runs `script` on the primary serving keys.front()'s slot (all keys of a
  // request share it). WAIT follows when required_sync(sync, the primary's
  // replicas) asks for it: in the same round trip when the replica count is
  // known before sending; in a second one (same connection, so WAIT covers this
  // write) when the count arrived only with this request's handshake.
  // An automatic sync also refreshes the count (INFO replication, same round trip)
  // when it is older than k_replicas_refresh.
  EvalReply eval(const Script& script, const std::vector<std::string>& keys,
                 const std::vector<std::string>& args, const SyncReplicas& sync = {});

  // Asks again where the primary is, so the next request goes to the current
  // one: Sentinel only (the old primary of a failover keeps accepting writes
  // until the sentinels reconfigure it, seconds later; the renewal thread calls
  // this before each renewal so it renews where everyone else now locks). A
  // failure keeps the known primary. A Cluster needs nothing: MOVED tells.
  void refresh();

  // True on a Redis Cluster (asks the server once if not known yet).
  bool is_cluster();
  // True when where a request goes is the deployment's to say, and asked again
  // after a node fails (a Cluster known as one, Sentinel): a request a node
  // refused to connect may reach the node that serves it now
  // (RetryScope::reroutes). Never asks.
  bool reroutes() const;
  // The command that publishes a release message: SPUBLISH on a Redis 7+
  // Cluster (as Redisson does there), PUBLISH elsewhere. Costs no round trip:
  // before the first request it answers PUBLISH (see publish()).
  std::string publish_command() const;
  // Publishes `message` on `channel` with publish_command(), on the node that
  // serves the channel's slot: for a release sent before the client knew it
  // was talking to a Cluster (PUBLISH), so sharded subscribers hear it too.
  void publish(const std::string& channel, const std::string& message);

  // Where and how to wait for messages on `channel`.
  struct Subscription {
    Endpoint node;
    bool sharded = false; // SSUBSCRIBE instead of SUBSCRIBE
  };
  Subscription subscription_for(std::string_view channel);
  // A node answered MOVED or ASK outside a request of this client (a waiter's
  // SSUBSCRIBE after the slot moved): the next request reloads the slot map.
  void slot_map_stale() { m_map_stale = true; }
  // A waiter's SUBSCRIBE to `node` failed (refused, broken, unanswered): as
  // after a request's socket error, that node is forgotten, and where a
  // channel goes is asked again (the slot map, the sentinels).
  void subscription_failed(const Endpoint& node) { forget(node); }

  // Every primary: the server, the Sentinel's primary, or each master of the
  // Cluster's slot map.
  std::vector<Endpoint> primaries();
  // One command (SCAN) on one of primaries().
  Reply command_on(const Endpoint& node, const Argv& argv);

  // The run_ids its connections have learnt (a target with `identify`: from
  // the INFO server that went with each connection's first request). Never asks.
  std::vector<std::string> run_ids() const;

  // How each server its connections reached names itself (HELLO's server and
  // version; Redis < 6 says nothing and is left out), in node order. Never asks.
  struct ServerName {
    std::string server; // the node, as describe() shows it
    std::string name;   // "redis", "valkey"
    std::string version;
  };
  std::vector<ServerName> server_names() const;

  const Endpoint& target() const { return m_target; }
  const Timeouts& timeouts() const { return m_timeouts; }
  // For messages: the URL's target, never a password.
  std::string describe() const { return m_target.display(); }

private:
  enum class Mode { unknown, standalone, cluster };

  Endpoint node_for(std::uint16_t slot);
  // The replica count required_sync() gets: the primary's own (INFO
  // replication), at least the replicas its cluster view lists (CLUSTER
  // NODES), and on Sentinel at least the replicas the sentinels list.
  std::optional<long long> replicas_of(const ServerInfo& primary) const;
  // The URL's nodes: each seed of a Cluster URL, else the URL's one endpoint.
  std::vector<Endpoint> seeds() const;
  // `error` of a request to `node`, naming the node when it is not the URL's
  // own (a Cluster's primary, the Sentinel's primary).
  RedisError at_node(const RedisError& error, const Endpoint& node) const;
  Connection& connection(const Endpoint& node);
  // The WAIT of an automatic sync whose replica count arrived with the request
  // (eval's second round trip). A Cluster node whose connection was made before
  // the deployment was known to be a Cluster, and with no connected replica,
  // is asked its view first (one round trip more, there only).
  void late_sync(Connection& conn, const SyncReplicas& sync, EvalReply& result);
  void learn_mode(Connection& conn);
  void learn_sharding(Connection& conn);
  void load_slot_map();
  void resolve_primary();
  void forget(const Endpoint& node);

  Endpoint m_target;
  Timeouts m_timeouts;
  Mode m_mode = Mode::unknown;
  bool m_sharded = false;                  // Cluster with sharded pub/sub (Redis 7+)
  std::optional<HostPort> m_primary;       // Sentinel: the primary they named
  std::unique_ptr<Connection> m_sentinel;  // Sentinel: the last one that answered
  std::optional<long long> m_sentinel_replicas; // Sentinel: sentinel_replicas() at the last resolve
  std::vector<HostPort> m_masters;         // Cluster: primaries of the slot map
  std::vector<std::int16_t> m_slot_master; // slot -> index in m_masters (-1: unknown); empty: no map
  bool m_map_stale = false;
  std::map<std::string, std::unique_ptr<Connection>> m_connections; // by node
};

} // namespace rlock::redis
