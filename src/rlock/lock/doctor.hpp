#pragma once

// `rlock doctor`: the facts read from each server and the pure verdicts on
// them (eviction, persistence, replicas, version, clock, history).

#include <rlock/lock/history.hpp>
#include <rlock/redis/client.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlock::lock {

// What `rlock doctor` learnt about one server (a primary, or a Redlock master).
// Each fact is empty when it could not be read; the matching *_error says why.
// Texts read from the server are made printable (core/text.hpp) as they are read.
struct ServerFacts {
  std::string server;      // for messages: host:port, never a password
  std::string unreachable; // non-empty: nothing could be asked (the error)
  std::string topology; // "standalone", "cluster (N primaries)", "sentinel (primary NAME)", "redlock master"
  // How the server names itself (server_identity): Valkey's "valkey" and its
  // own version, else "redis" and redis_version; redis_version is what a
  // Valkey says it is compatible with.
  std::string server_name;
  std::string version;
  std::string redis_version;
  std::string run_id;   // INFO server: run_id (the server's identity until it restarts)
  std::string info_error;
  std::optional<std::string> maxmemory_policy, save, appendonly;
  std::optional<long long> min_replicas_to_write;
  std::string config_error; // why CONFIG GET failed, e.g. "no permission (NOPERM ...)"
  std::string role;         // INFO replication: "master" / "slave"
  std::optional<long long> connected_replicas;
  // INFO replication's slaveN lines: "host:port" and state (online, wait_bgsave, ...).
  std::vector<std::pair<std::string, std::string>> replica_states;
  // A Cluster primary: the replicas its CLUSTER NODES lists (redis::cluster_view),
  // "host:port"; nullopt when not a cluster or not readable (cluster_error).
  std::optional<std::vector<std::string>> listed_replicas;
  std::string cluster_error;
  // Not read from the server: what rlock's acquire and renew ask of replicas
  // (cli::describe_sync); "" when off (--sync-replicas 0, RLOCK_SYNC_REPLICAS=0).
  std::string replica_sync;
  std::optional<long long> clock_offset_ms; // server TIME minus this host's clock
  std::string time_error;
  // History (issue 30): whether this user may keep the history of the rlock
  // locks held now (at most 16, found by SCAN; a lock works without it). Not
  // read from the server: history_enabled (RLOCK_HISTORY_MAXLEN is not 0) and
  // user (the URL's, "" = default).
  bool history_enabled = true;
  std::string user;
  int history_checked = 0; // rlock locks whose history key was looked at
  std::vector<std::pair<std::string, LogAccess>> history_problems; // history key, what keeps it from being written
  bool history_unknown = false; // whether the user may append, the server cannot tell (before 7.0)
  std::string history_error;
};

// The first two servers of `facts` with the same non-empty run_id (one server
// surveyed twice, e.g. two Redlock URLs of one server that resolve to different
// addresses: a unix socket and TCP, 0.0.0.0 and 127.0.0.1), as indices. Pure.
std::optional<std::pair<std::size_t, std::size_t>> same_run_id(const std::vector<ServerFacts>& facts);

// The server's name and version as INFO server gives them: server_name and
// `<server_name>_version` where present (Valkey: "valkey", valkey_version),
// else "redis" and redis_version; redis_version too (Valkey 8 answers "7.2.4"
// there). Pure; the text is untrusted (made printable, bounded).
struct ServerIdentity {
  std::string name;
  std::string version;
  std::string redis_version;
};
ServerIdentity server_identity(const std::string& info_server);

// How a finding bears on lock safety.
enum class Verdict { ok, warning, unsafe };

// One finding: the setting that was read, a verdict and why it matters.
struct Finding {
  std::string server;
  std::string check; // "eviction", "persistence", "replication", "version", "clock", "topology", "reachable", "history"
  std::string setting; // "maxmemory-policy allkeys-lru", ...
  Verdict verdict = Verdict::ok;
  std::string why;
};

// The findings about one server, from its facts (pure). Unknown facts give a
// warning finding "cannot check ...: <why>"; unsafe only for what was read.
std::vector<Finding> judge_server(const ServerFacts& facts);

// Reads the facts of one server through `client` (`node`: one of its
// primaries). CONFIG, INFO and TIME are asked separately, so a user without
// CONFIG permission still gets the rest. Throws RedisError only when the server
// cannot be reached at all.
ServerFacts survey(redis::Client& client, const redis::Endpoint& node, const std::string& topology);

} // namespace rlock::lock
