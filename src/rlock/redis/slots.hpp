#pragma once

// Redis Cluster: hash slots, and what a node's own view of the cluster
// (CLUSTER NODES) says about the replicas a failover may promote.

#include <rlock/redis/url.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::redis {

struct Reply;

inline constexpr int k_cluster_slots = 16384;

// Redis Cluster hash slot of a key (CRC16/XMODEM mod 16384, honouring {hash tags}).
std::uint16_t hash_slot(std::string_view key);

// A CLUSTER SLOTS reply read: the primaries that serve slots (in the order
// first named) and, for each slot, the index of its primary (-1: none, or one
// without a known address).
struct SlotMap {
  std::vector<HostPort> masters;
  std::vector<std::int16_t> slot_master; // k_cluster_slots entries
};

// Parses a CLUSTER SLOTS reply (untrusted): nullopt for anything that is not
// a slot map (a range out of 0..16383 or backwards, a node without a string
// host of at most 255 bytes or a port, more primaries than slots). A node
// whose host is empty is `source_host` (the node asked); one whose host is
// "?" or whose port is out of range serves nothing reachable and is skipped.
// Pure.
std::optional<SlotMap> slot_map(const Reply& reply, std::string_view source_host);

// What one node's CLUSTER NODES says about itself and its replicas.
struct ClusterView {
  bool primary = false; // the node asked is a primary ("myself,master")
  // Its replicas that a failover may promote: every node the view lists as a
  // replica of it ("slave <its id>") unless flagged `fail` (the cluster agreed
  // it is down), `noaddr` or `handshake` (not a member yet). Listed whether or
  // not their link to the primary is up, and whether or not they have finished
  // a sync: the cluster promotes a replica whose link is down as long as its
  // data is recent enough (cluster-replica-validity-factor), and the primary
  // cannot tell a first sync from a full resync of a replica that has older
  // data. Empty for a replica.
  std::vector<HostPort> replicas;
};

// Parses a CLUSTER NODES reply (text, untrusted: at most 100 000 lines are
// read, fields are bounded). nullopt for an error reply (not a cluster, no
// permission), a reply that is not text, or one without a "myself" line. An
// empty host (a node that does not know its own address yet) becomes
// `own_host`. Pure.
std::optional<ClusterView> cluster_view(const Reply& reply, std::string_view own_host = {});

// The replicas of a primary as "host:port", from INFO replication's slaveN
// lines (those connected to it, in any state): for `doctor`, which compares them
// with the cluster's view. Each with its `state` (online, wait_bgsave,
// send_bulk, ...). Pure; bounded like cluster_view.
struct ConnectedReplica {
  HostPort node;
  std::string state;
};
std::vector<ConnectedReplica> connected_replicas(std::string_view info_replication);

} // namespace rlock::redis
