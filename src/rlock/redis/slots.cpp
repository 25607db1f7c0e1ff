// Redis Cluster's hash slots (CRC16) and a node's own view of the cluster
// (CLUSTER NODES): the replicas a failover may promote.

#include <rlock/redis/errors.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/slots.hpp>

#include <algorithm>
#include <charconv>

namespace rlock::redis {

namespace {

std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (char ch : data) {
    crc = static_cast<std::uint16_t>(crc ^ (static_cast<std::uint8_t>(ch) << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

constexpr std::size_t k_max_view_lines = 100'000;

// "a,b,c" holds `flag` as one of its elements.
bool view_has_flag(std::string_view flags, std::string_view flag) {
  while (!flags.empty()) {
    auto comma = flags.find(',');
    if (flags.substr(0, comma) == flag) {
      return true;
    }
    flags = comma == std::string_view::npos ? std::string_view{} : flags.substr(comma + 1);
  }
  return false;
}

// "ip:port@cport[,hostname]" or "ip:port" (Redis before 4); IPv6 hosts are
// written without brackets ("::1:7000@17000"). nullopt when malformed.
std::optional<HostPort> view_node_address(std::string_view text, std::string_view own_host) {
  text = text.substr(0, text.find_first_of("@,"));
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || text.size() > 300) {
    return std::nullopt;
  }
  int port = 0;
  std::string_view port_text = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return std::nullopt;
  }
  std::string host(text.substr(0, colon));
  return HostPort{host.empty() ? std::string(own_host) : host, port};
}

// Calls `each(line)` for the lines of `text` ("\r\n" or "\n"), at most
// k_max_view_lines of them.
template <typename Each>
void for_view_lines(std::string_view text, Each each) {
  std::size_t lines = 0;
  while (!text.empty() && lines++ < k_max_view_lines) {
    auto end = text.find('\n');
    std::string_view one = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (!one.empty() && one.back() == '\r') {
      one.remove_suffix(1);
    }
    each(one);
  }
}

// Calls `line(fields)` for each non-empty line of `text` split on spaces (at
// most 12 fields kept: slots follow).
template <typename Each>
void each_view_line(std::string_view text, Each line) {
  for_view_lines(text, [&](std::string_view one) {
    std::vector<std::string_view> fields;
    while (!one.empty() && fields.size() < 12) {
      auto space = one.find(' ');
      if (space != 0) {
        fields.push_back(one.substr(0, space));
      }
      one = space == std::string_view::npos ? std::string_view{} : one.substr(space + 1);
    }
    if (!fields.empty()) {
      line(fields);
    }
  });
}

} // namespace

std::uint16_t hash_slot(std::string_view key) {
  auto open = key.find('{');
  if (open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return static_cast<std::uint16_t>(crc16_xmodem(key) % k_cluster_slots);
}

std::optional<SlotMap> slot_map(const Reply& reply, std::string_view source_host) {
  if (!reply.is_array()) {
    return std::nullopt;
  }
  // A slot number or port that is not an integer (nor a string of one).
  auto integer_of = [](const Reply& value) -> std::optional<long long> {
    try {
      return value.as_integer();
    } catch (const RedisError&) {
      return std::nullopt;
    }
  };
  SlotMap map;
  map.slot_master.assign(k_cluster_slots, -1);
  for (const auto& range : reply.elements) {
    if (!range.is_array() || range.elements.size() < 3 || !range.elements[2].is_array() ||
        range.elements[2].elements.size() < 2) {
      return std::nullopt;
    }
    std::optional<long long> first = integer_of(range.elements[0]);
    std::optional<long long> last = integer_of(range.elements[1]);
    const auto& node = range.elements[2].elements;
    std::optional<long long> port_number = integer_of(node[1]);
    if (!first || !last || !port_number || *first < 0 || *last >= k_cluster_slots || *first > *last ||
        node[0].type != Reply::Type::string || node[0].str.size() > 255) {
      return std::nullopt;
    }
    if (*port_number < 1 || *port_number > 65535 || node[0].str == "?") {
      continue; // a node without a known address serves nothing we can reach
    }
    HostPort master{node[0].str.empty() ? std::string(source_host) : node[0].str, static_cast<int>(*port_number)};
    auto found = std::find(map.masters.begin(), map.masters.end(), master);
    if (found == map.masters.end()) {
      if (map.masters.size() >= static_cast<std::size_t>(k_cluster_slots)) {
        return std::nullopt; // more primaries than slots: not a cluster's map (and an index must fit)
      }
      map.masters.push_back(master);
      found = map.masters.end() - 1;
    }
    std::fill(map.slot_master.begin() + *first, map.slot_master.begin() + *last + 1,
              static_cast<std::int16_t>(found - map.masters.begin()));
  }
  return map;
}

std::optional<ClusterView> cluster_view(const Reply& reply, std::string_view own_host) {
  if (reply.type != Reply::Type::string && reply.type != Reply::Type::status) {
    return std::nullopt;
  }
  // <id> <ip:port@cport[,hostname]> <flags> <primary id or -> <ping> <pong> <epoch> <link> <slot>...
  std::string_view my_id;
  bool found = false;
  ClusterView view;
  each_view_line(reply.str, [&](const std::vector<std::string_view>& fields) {
    if (!found && fields.size() >= 3 && view_has_flag(fields[2], "myself")) {
      found = true;
      my_id = fields[0];
      view.primary = view_has_flag(fields[2], "master");
    }
  });
  if (!found || my_id.empty() || my_id == "-") {
    return std::nullopt;
  }
  if (!view.primary) {
    return view;
  }
  each_view_line(reply.str, [&](const std::vector<std::string_view>& fields) {
    if (fields.size() < 4 || fields[3] != my_id || !view_has_flag(fields[2], "slave") || view_has_flag(fields[2], "fail") ||
        view_has_flag(fields[2], "noaddr") || view_has_flag(fields[2], "handshake") || view_has_flag(fields[2], "myself")) {
      return;
    }
    if (auto node = view_node_address(fields[1], own_host)) {
      view.replicas.push_back(std::move(*node));
    } else {
      view.replicas.push_back(HostPort{"?", 0}); // listed: counted, whatever its address says
    }
  });
  return view;
}

std::vector<ConnectedReplica> connected_replicas(std::string_view info) {
  // slave0:ip=127.0.0.1,port=7004,state=online,offset=123,lag=0
  std::vector<ConnectedReplica> out;
  for_view_lines(info, [&](std::string_view line) {
    auto colon = line.find(':');
    if (!line.starts_with("slave") || colon == std::string_view::npos || colon < 6 ||
        line.substr(5, colon - 5).find_first_not_of("0123456789") != std::string_view::npos) {
      return;
    }
    ConnectedReplica replica;
    std::string_view port_text;
    for (std::string_view rest = line.substr(colon + 1); !rest.empty();) {
      auto comma = rest.find(',');
      std::string_view pair = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      auto eq = pair.find('=');
      std::string_view key = pair.substr(0, eq);
      std::string_view value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
      if (key == "ip") {
        replica.node.host = std::string(value.substr(0, 255));
      } else if (key == "port") {
        port_text = value;
      } else if (key == "state") {
        replica.state = std::string(value.substr(0, 32));
      }
    }
    int port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    // 0 when unreadable, out of range included (issue 44: the fuzzer's
    // "port=-2" and "port=99999" were kept as such).
    bool readable = ec == std::errc() && ptr == port_text.data() + port_text.size() && port >= 0 && port <= 65535;
    replica.node.port = readable ? port : 0;
    out.push_back(std::move(replica));
  });
  return out;
}

} // namespace rlock::redis
