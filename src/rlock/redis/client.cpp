// The deployment behind a URL: standalone, Cluster (slot map, MOVED/ASK) or
// Sentinel (the primary, failovers), replica counts and replica sync.

#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/client.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/slots.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rlock::redis {

namespace {

// "host:port" of a node; a unix socket by its path.
std::string node_key(const Endpoint& node) {
  return node.transport == Endpoint::Transport::unix_socket ? node.path
                                                            : fmt::format("{}:{}", node.host, node.port);
}

std::optional<int> parse_port(std::string_view text) {
  int port = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || ptr != text.data() + text.size() || port < 1 || port > 65535) {
    return std::nullopt;
  }
  return port;
}

// The node of a MOVED or ASK error ("MOVED 3999 127.0.0.1:6381"); an empty
// host means the host of the node that answered.
HostPort redirect_target(const RedisError& error, const Endpoint& answered) {
  std::string_view text = error.what();
  auto space = text.rfind(' ');
  std::string_view address = space == std::string_view::npos ? text : text.substr(space + 1);
  auto colon = address.rfind(':');
  std::optional<int> port =
      colon == std::string_view::npos ? std::nullopt : parse_port(address.substr(colon + 1));
  if (!port) {
    throw RedisError(RedisErrorKind::protocol, fmt::format("cannot follow '{}'", printable(text)));
  }
  std::string host(address.substr(0, colon));
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
  }
  return {host.empty() ? answered.host : host, *port};
}

bool socket_error(RedisErrorKind kind) {
  return outcome_of(kind) == Outcome::not_sent || outcome_of(kind) == Outcome::unknown;
}

Argv sync_wait_argv(const SyncReplicas& required) {
  return Argv{"WAIT", std::to_string(required.count), std::to_string(required.timeout.count())};
}

// "127.0.0.1:7000 (replicas 127.0.0.1:7003)" for each range of a CLUSTER SLOTS
// reply, for -v: the replicas CLUSTER SLOTS names (Redis 7 leaves out one
// whose replication offset is still 0; the count rlock waits for comes from
// each primary's CLUSTER NODES).
std::string describe_slot_map(const Reply& reply) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& range : reply.elements) {
    if (++shown > 16) {
      out += fmt::format("; ... {} more ranges", reply.elements.size() - 16);
      break;
    }
    std::string nodes;
    for (std::size_t i = 2; i < range.elements.size() && i < 10; ++i) {
      const auto& node = range.elements[i];
      if (!node.is_array() || node.elements.size() < 2) {
        continue;
      }
      std::string address =
          fmt::format("{}:{}", printable(node.elements[0].str.substr(0, 64)), node.elements[1].integer);
      nodes += i == 2 ? address : fmt::format("{}{}", i == 3 ? " (replicas " : ", ", address);
    }
    nodes += range.elements.size() > 3 ? ")" : " (CLUSTER SLOTS lists no replica)";
    out += fmt::format("{}{}-{} {}", out.empty() ? "" : "; ", range.elements[0].integer,
                       range.elements[1].integer, nodes);
  }
  return out;
}

} // namespace

Client::Client(Endpoint target, Timeouts timeouts) : m_target(std::move(target)), m_timeouts(timeouts) {
  if (m_target.is_cluster()) {
    m_mode = Mode::cluster; // the URL says so: the slot map comes first
  }
}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Client Client::fresh(std::optional<Millis> cap) const {
  Client copy(m_target, cap ? m_timeouts.capped(*cap) : m_timeouts);
  copy.m_mode = m_mode;
  copy.m_sharded = m_sharded;
  copy.m_primary = m_primary;
  copy.m_sentinel_replicas = m_sentinel_replicas;
  copy.m_masters = m_masters;
  copy.m_slot_master = m_slot_master;
  copy.m_map_stale = m_map_stale;
  return copy;
}

Connection& Client::connection(const Endpoint& node) {
  auto& slot = m_connections[node_key(node)];
  if (!slot) {
    Endpoint at = node;
    at.cluster_view = at.learn_replicas && m_mode == Mode::cluster; // its handshake asks CLUSTER NODES
    slot = std::make_unique<Connection>(std::move(at), m_timeouts, m_target.is_sentinel());
  }
  return *slot;
}

void Client::forget(const Endpoint& node) {
  m_connections.erase(node_key(node));
  if (m_target.is_sentinel()) {
    m_primary.reset();
  } else if (m_mode == Mode::cluster) {
    m_map_stale = true;
  }
}

void Client::learn_mode(Connection& conn) {
  if (m_mode != Mode::unknown || !conn.connected()) {
    return;
  }
  const auto& info = conn.server_info(); // no round trip: HELLO went with the request
  if (!info.known) {
    return;
  }
  m_mode = info.mode == "cluster" ? Mode::cluster : Mode::standalone;
  learn_sharding(conn);
  log::debug("{}: Redis {} ({}{})", conn.describe(), printable(info.version), printable(info.mode),
             m_sharded ? ", sharded pub/sub" : "");
}

void Client::resolve_primary() {
  // The sentinel that answered last first, then each in the URL's order.
  std::vector<Endpoint> candidates;
  if (m_sentinel) {
    candidates.push_back(m_sentinel->endpoint());
  }
  for (const auto& sentinel : m_target.sentinels) {
    Endpoint at = m_target.at(sentinel);
    at.db = 0;
    at.user.clear();
    at.password.reset();
    candidates.push_back(at);
  }
  std::string why = "no sentinel was given";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    std::unique_ptr<Connection> conn = i == 0 && m_sentinel
                                           ? std::move(m_sentinel)
                                           : std::make_unique<Connection>(candidates[i], m_timeouts);
    for (int login = 0; login < 2; ++login) {
      try {
        Reply reply;
        if (m_target.learn_replicas) {
          // The replicas the sentinels know (same round trip): one whose link
          // to the primary is down (PSYNC refused, cut off) is not among the
          // primary's connected_slaves, yet the sentinels may promote it.
          try {
            auto replies = conn->pipeline({{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", m_target.master},
                                           {"SENTINEL", "SLAVES", m_target.master}});
            reply = std::move(replies[0]);
            m_sentinel_replicas = sentinel_replicas(replies[1]);
          } catch (const RedisError& e) {
            if (socket_error(e.kind()) || e.kind() == RedisErrorKind::auth) {
              throw;
            }
            m_sentinel_replicas.reset(); // SENTINEL SLAVES refused: the primary's count alone
            reply = conn->command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", m_target.master});
          }
        } else {
          reply = conn->command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", m_target.master});
        }
        if (reply.is_nil()) {
          why = fmt::format("sentinel {} does not know a master named {}", conn->describe(),
                            quote(m_target.master));
          break;
        }
        std::optional<HostPort> answered = sentinel_master(reply);
        if (!answered) {
          why = fmt::format("sentinel {} answered {}", conn->describe(), reply.summary());
          break;
        }
        HostPort primary = std::move(*answered);
        if (m_primary && *m_primary != primary) {
          log::debug("sentinel {}: master {} moved from {}:{} to {}:{}", conn->describe(),
                     quote(m_target.master), m_primary->host, m_primary->port, primary.host, primary.port);
          m_connections.erase(node_key(m_target.at(*m_primary)));
        }
        m_primary = primary;
        m_sentinel = std::move(conn);
        return;
      } catch (const RedisError& e) {
        why = fmt::format("sentinel {}: {}", conn->describe(), e.what());
        // A sentinel that wants a password gets the URL's (sentinels and
        // data nodes often share one).
        if (e.kind() == RedisErrorKind::auth && login == 0 && m_target.password) {
          Endpoint with_login = conn->endpoint();
          with_login.user = m_target.user;
          with_login.password = m_target.password;
          conn = std::make_unique<Connection>(with_login, m_timeouts);
          continue;
        }
        break;
      }
    }
  }
  throw RedisError(RedisErrorKind::connect,
                   fmt::format("no primary for {}: {}", quote(m_target.master), why));
}

void Client::refresh() {
  if (!m_target.is_sentinel()) {
    return;
  }
  try {
    resolve_primary();
  } catch (const RedisError& e) {
    log::debug("{}; keeping the known primary", e.what());
  }
}

std::vector<Endpoint> Client::seeds() const {
  if (!m_target.is_cluster()) {
    return {m_target};
  }
  std::vector<Endpoint> out;
  for (const auto& seed : m_target.seeds) {
    out.push_back(m_target.at(seed));
  }
  return out;
}

RedisError Client::at_node(const RedisError& error, const Endpoint& node) const {
  if (!m_target.is_cluster() && !m_target.is_sentinel() && node_key(node) == node_key(m_target)) {
    return error; // the node the URL names: the caller's context says which
  }
  RedisError named(error.kind(), fmt::format("{}: {}", node.display(), error.what()));
  if (auto at = error.settles_at()) {
    named.set_settles_at(*at);
  }
  if (auto at = error.sent_at()) {
    named.set_sent_at(*at);
  }
  return named;
}

void Client::load_slot_map() {
  // Ask the nodes we know: the URL's (each seed in turn), then the primaries
  // of the last map.
  std::vector<Endpoint> sources = seeds();
  for (const auto& master : m_masters) {
    Endpoint node = m_target.at(master);
    if (std::none_of(sources.begin(), sources.end(),
                     [&](const Endpoint& known) { return node_key(known) == node_key(node); })) {
      sources.push_back(std::move(node));
    }
  }
  std::optional<RedisError> last;
  std::string tried;
  for (const auto& source : sources) {
    Reply reply;
    try {
      reply = connection(source).command({"CLUSTER", "SLOTS"});
    } catch (const RedisError& e) {
      if (!socket_error(e.kind())) {
        throw at_node(e, source);
      }
      m_connections.erase(node_key(source));
      tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", source.display(), e.what());
      last = e;
      continue;
    }
    std::optional<SlotMap> map = slot_map(reply, source.host);
    if (!map) {
      throw RedisError(RedisErrorKind::protocol,
                       fmt::format("{}: unexpected CLUSTER SLOTS reply {}", source.display(), reply.summary()));
    }
    m_masters = std::move(map->masters);
    m_slot_master = std::move(map->slot_master);
    m_map_stale = false;
    m_mode = Mode::cluster;
    learn_sharding(connection(source));
    log::debug("{}: slot map of {} primaries: {}", source.display(), m_masters.size(), describe_slot_map(reply));
    return;
  }
  if (sources.size() == 1) {
    throw at_node(*last, sources.front());
  }
  throw RedisError(last->kind(), fmt::format("no node of the cluster answered ({})", tried));
}

// Redisson (ShardedSubscriptionMode.AUTO) uses sharded pub/sub on a Cluster
// whose servers have it (Redis 7+); so does rlock, judging by the version.
void Client::learn_sharding(Connection& conn) {
  if (conn.connected() && m_mode == Mode::cluster) {
    m_sharded = conn.server_info().major() >= 7;
  }
}

Endpoint Client::node_for(std::uint16_t slot) {
  if (m_target.is_sentinel()) {
    if (!m_primary) {
      resolve_primary();
    }
    return m_target.at(*m_primary);
  }
  if (m_mode == Mode::cluster) {
    if (m_slot_master.empty() || m_map_stale) {
      load_slot_map();
    }
    if (m_slot_master[slot] >= 0) {
      return m_target.at(m_masters[static_cast<std::size_t>(m_slot_master[slot])]);
    }
  }
  return seeds().front(); // a slot no primary serves: its answer (CLUSTERDOWN, MOVED) tells
}

SyncReplicas SyncReplicas::automatic_for(Millis ttl) {
  return SyncReplicas{1, automatic_sync_timeout(ttl), true};
}

Millis automatic_sync_timeout(Millis ttl) {
  return std::clamp(ttl / 10, Millis(1), k_max_automatic_sync);
}

std::optional<HostPort> sentinel_master(const Reply& reply) {
  if (!reply.is_array() || reply.elements.size() != 2 || reply.elements[0].type != Reply::Type::string ||
      reply.elements[1].type != Reply::Type::string) {
    return std::nullopt;
  }
  std::optional<int> port = parse_port(reply.elements[1].str);
  const std::string& host = reply.elements[0].str;
  if (!port || host.empty() || host.size() > 255) {
    return std::nullopt;
  }
  return HostPort{host, *port};
}

std::optional<long long> sentinel_replicas(const Reply& reply) {
  if (!reply.is_array()) {
    return std::nullopt;
  }
  long long count = 0;
  for (const auto& replica : reply.elements) {
    if (!replica.is_array()) {
      return std::nullopt;
    }
    std::string_view flags, role;
    for (std::size_t i = 0; i + 1 < replica.elements.size(); i += 2) {
      const auto& key = replica.elements[i];
      const auto& value = replica.elements[i + 1];
      if (key.type != Reply::Type::string || value.type != Reply::Type::string) {
        continue;
      }
      if (key.str == "flags") {
        flags = value.str;
      } else if (key.str == "role-reported") {
        role = value.str;
      }
    }
    // Down or disconnected: not promotable. Reporting itself a master: an old
    // primary the sentinels have not reconfigured yet after a failover (it
    // acknowledges nothing until it has; counting it would fail every write).
    if (role == "slave" && flags.find("s_down") == std::string_view::npos &&
        flags.find("o_down") == std::string_view::npos && flags.find("disconnected") == std::string_view::npos) {
      ++count;
    }
  }
  return count;
}

std::optional<long long> Client::replicas_of(const ServerInfo& primary) const {
  std::optional<long long> count = primary.replicas;
  for (const auto& other : {primary.cluster_replicas,
                            m_target.is_sentinel() ? m_sentinel_replicas : std::optional<long long>()}) {
    if (other) {
      count = std::max(count.value_or(0), *other);
    }
  }
  return count;
}

SyncReplicas required_sync(const SyncReplicas& asked, std::optional<long long> replicas) {
  if (!asked.automatic) {
    return asked.count > 0 ? asked : SyncReplicas{0, asked.timeout, false};
  }
  if (replicas && *replicas > 0) {
    return SyncReplicas{1, asked.timeout, true};
  }
  return SyncReplicas{0, asked.timeout, true};
}

EvalReply Client::eval(const Script& script, const std::vector<std::string>& keys,
                       const std::vector<std::string>& args, const SyncReplicas& sync) {
  const Argv evalsha = evalsha_argv(script, keys, args);
  const std::uint16_t slot = hash_slot(keys.front());
  std::optional<HostPort> asked; // ASK: the next try goes there, once
  for (int hop = 0;; ++hop) {
    Endpoint node = asked ? m_target.at(*asked) : node_for(slot);
    std::vector<Argv> before;
    if (asked) {
      before.push_back({"ASKING"});
    }
    asked.reset();
    Connection& conn = connection(node);
    try {
      // What this primary needs, from what is known before sending (an
      // automatic sync on a connection whose handshake rides with this
      // request knows nothing yet: see below).
      conn.ensure_connected(); // a login handshake (password, db) learns the replicas now
      const bool handshake = conn.handshake_next();
      const auto& known = conn.known_info();
      SyncReplicas required = required_sync(sync, handshake ? std::nullopt : replicas_of(known));
      std::vector<Argv> after;
      if (required.count > 0) {
        after.push_back(sync_wait_argv(required));
      }
      const bool refresh = sync.automatic && !handshake && !known.role_refused &&
                           Clock::now() - known.replicas_at >= k_replicas_refresh;
      // (only where CLUSTER NODES answered before: an error reply would fail the request)
      const bool refresh_view = refresh && m_mode == Mode::cluster && known.cluster_replicas.has_value();
      if (refresh) {
        after.push_back({"INFO", "replication"}); // after WAIT: the count for the next request
      }
      if (refresh_view) {
        after.push_back({"CLUSTER", "NODES"}); // ... and the replicas the cluster may promote
      }
      TimePoint sent{};
      auto replies = eval_batch(conn, script, evalsha, before, after,
                                required.count > 0 ? required.timeout : Millis(0), &sent);
      learn_mode(conn);
      EvalReply result{std::move(replies.front()),
                       -1,
                       required,
                       reroutes() ? node.display() : std::string(),
                       sent,
                       std::nullopt};
      if (required.count > 0) {
        result.acked = replies[1].as_integer();
      }
      if (refresh) {
        conn.take_replication(replies[replies.size() - (refresh_view ? 2 : 1)]);
      }
      if (refresh_view) {
        conn.take_cluster_view(replies.back());
      }
      if (required.count == 0 && sync.automatic) {
        // The count may have arrived with this request (INFO replication and
        // CLUSTER NODES in its handshake, or the refresh): a primary found to
        // have replicas gets its WAIT now, on the same connection, so it covers
        // this write. One more round trip, only where there are replicas.
        late_sync(conn, sync, result);
      }
      return result;
    } catch (const RedisError& e) {
      learn_mode(conn);
      if (socket_error(e.kind())) {
        forget(node);
        throw at_node(e, node);
      }
      if (hop >= k_max_hops) {
        throw;
      }
      switch (e.kind()) {
      case RedisErrorKind::moved: {
        // Not applied there. The map is stale: load it again, but send to the
        // node MOVED names (it owns the slot now, whatever a lagging node says).
        auto target = redirect_target(e, node);
        log::debug("{}: {}", node.display(), e.what());
        m_mode = Mode::cluster;
        m_map_stale = true;
        try {
          load_slot_map();
        } catch (const RedisError& map_error) {
          log::debug("cannot load the slot map: {}", map_error.what());
        }
        auto found = std::find(m_masters.begin(), m_masters.end(), target);
        if (found == m_masters.end()) {
          if (m_masters.size() >= static_cast<std::size_t>(k_cluster_slots)) {
            throw RedisError(RedisErrorKind::protocol, "more cluster nodes named than there are slots");
          }
          m_masters.push_back(target);
          found = m_masters.end() - 1;
        }
        if (m_slot_master.empty()) {
          m_slot_master.assign(k_cluster_slots, -1);
        }
        m_slot_master[slot] = static_cast<std::int16_t>(found - m_masters.begin());
        break;
      }
      case RedisErrorKind::ask:
        log::debug("{}: {}", node.display(), e.what());
        m_mode = Mode::cluster;
        asked = redirect_target(e, node);
        break;
      case RedisErrorKind::readonly:
        // A replica answered: the primary moved (failover). Nothing was written.
        if (!m_target.is_sentinel() && m_mode != Mode::cluster) {
          throw;
        }
        log::debug("{}: {}; looking for the primary again", node.display(), e.what());
        forget(node);
        break;
      default:
        throw;
      }
    }
  }
}

void Client::late_sync(Connection& conn, const SyncReplicas& sync, EvalReply& result) {
  SyncReplicas late = required_sync(sync, replicas_of(conn.known_info()));
  if (late.count == 0 && m_mode == Mode::cluster && !conn.known_info().cluster_view_asked) {
    // A connection made before rlock knew it talks to a Cluster (a redis:// URL's
    // node, found to be one by this request's HELLO) and no connected replica:
    // the cluster may still list one whose link is down (issue 33). Its view now.
    Reply view;
    try {
      view = conn.command({"CLUSTER", "NODES"});
    } catch (const RedisError& e) {
      if (socket_error(e.kind())) {
        throw;
      }
      view.type = Reply::Type::error; // refused (ACL): INFO's count alone, as before
      view.str = e.what();
    }
    conn.take_cluster_view(view);
    log::debug("{}: {} replicas in the cluster's view (CLUSTER NODES)", conn.describe(),
               conn.known_info().cluster_replicas ? std::to_string(*conn.known_info().cluster_replicas)
                                                  : "unknown");
    late = required_sync(sync, replicas_of(conn.known_info()));
  }
  if (late.count > 0) {
    result.required = late;
    result.acked = conn.pipeline({sync_wait_argv(late)}, late.timeout).front().as_integer();
  }
}

bool Client::is_cluster() {
  if (m_mode == Mode::unknown && !m_target.is_sentinel()) {
    Connection& conn = connection(m_target);
    conn.server_info(); // connects and asks HELLO if not done yet
    learn_mode(conn);
    if (m_mode == Mode::unknown) {
      m_mode = Mode::standalone; // no HELLO (Redis < 6): a MOVED would still tell
    }
  }
  return m_mode == Mode::cluster;
}

std::string Client::publish_command() const {
  return m_mode == Mode::cluster && m_sharded ? "SPUBLISH" : "PUBLISH";
}

void Client::publish(const std::string& channel, const std::string& message) {
  command_on(node_for(hash_slot(channel)), {publish_command(), channel, message});
}

Client::Subscription Client::subscription_for(std::string_view channel) {
  bool cluster = is_cluster();
  return {node_for(hash_slot(channel)), cluster && m_sharded};
}

std::vector<Endpoint> Client::primaries() {
  if (!is_cluster()) {
    return {node_for(0)};
  }
  if (m_slot_master.empty() || m_map_stale) {
    load_slot_map();
  }
  std::vector<Endpoint> nodes;
  for (const auto& master : m_masters) {
    nodes.push_back(m_target.at(master));
  }
  return nodes;
}

Reply Client::command_on(const Endpoint& node, const Argv& argv) {
  Connection& conn = connection(node);
  try {
    return conn.command(argv);
  } catch (const RedisError& e) {
    if (socket_error(e.kind()) || e.kind() == RedisErrorKind::readonly) {
      forget(node);
    }
    if (socket_error(e.kind())) {
      throw at_node(e, node);
    }
    throw;
  }
}

std::vector<Client::ServerName> Client::server_names() const {
  std::vector<ServerName> out;
  for (const auto& [node, conn] : m_connections) {
    if (conn && conn->known_info().known) {
      out.push_back({conn->endpoint().display(), conn->known_info().name, conn->known_info().version});
    }
  }
  return out;
}

bool Client::reroutes() const {
  return m_target.is_sentinel() || m_mode == Mode::cluster;
}

std::vector<std::string> Client::run_ids() const {
  std::vector<std::string> out;
  for (const auto& [node, conn] : m_connections) {
    if (conn && !conn->run_id().empty()) {
      out.push_back(conn->run_id());
    }
  }
  return out;
}

} // namespace rlock::redis
