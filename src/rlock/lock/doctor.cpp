// `rlock doctor`'s survey of a server (INFO, CONFIG, SCAN, TIME, ACL) and its
// pure verdicts: what threatens lock safety there, and why.

#include <rlock/lock/doctor.hpp>

#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/slots.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>

namespace rlock::lock {

namespace {

// One command to `node`, sent as every request is (redis::send_with_retries,
// a one-shot command's policy: a read, safe to send twice).
redis::Reply survey_command(redis::Client& client, const redis::Endpoint& node, const redis::Argv& argv) {
  return redis::send_with_retries(one_shot(client, false), [&] { return client.command_on(node, argv); });
}

// "no permission (NOPERM ...)" for a denial, else the error text.
std::string reason_of(const RedisError& e) {
  if (e.kind() == RedisErrorKind::auth) {
    return fmt::format("no permission ({})", e.what());
  }
  return e.what();
}

// "field:value" lines of an INFO section.
std::optional<std::string> info_field(const std::string& info, const std::string& field) {
  std::istringstream lines(info);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.starts_with(field + ":")) {
      return line.substr(field.size() + 1);
    }
  }
  return std::nullopt;
}

// CONFIG GET NAME's value (the reply is [name, value]; [] when unknown).
std::optional<std::string> config_value(const redis::Reply& reply) {
  if (reply.is_array() && reply.elements.size() >= 2) {
    return reply.elements[1].as_string();
  }
  return std::nullopt;
}

long long wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Finding finding(const ServerFacts& facts, std::string check, std::string setting, Verdict verdict,
                std::string why) {
  return Finding{facts.server, std::move(check), std::move(setting), verdict, std::move(why)};
}

// A fact that could not be read: a warning that says why (`error`, else that
// `source` gave nothing).
Finding cannot_check(const ServerFacts& facts, std::string check, std::string setting, std::string_view what,
                     const std::string& error, std::string_view source) {
  return finding(facts, std::move(check), std::move(setting), Verdict::warning,
                 fmt::format("cannot check {}: {}", what,
                             error.empty() ? fmt::format("{} says nothing", source) : error));
}

// (major, minor) of "7.0.15"; (0, 0) when unreadable.
std::pair<int, int> version_of(const std::string& text) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) < 1) {
    return {0, 0};
  }
  return {major, minor};
}

constexpr long long k_clock_warning_ms = 2000;

std::string replica_address(const redis::HostPort& node) {
  return printable(fmt::format("{}:{}", node.host.find(':') != std::string::npos ? "[" + node.host + "]" : node.host,
                               node.port));
}

// The replicas the cluster lists for this primary that are not connected to it
// (their link down: a failover may promote one that has none of the locks
// taken since). Matched by address; when addresses are announced differently,
// by count (more listed than connected).
std::vector<std::string> listed_not_connected(const ServerFacts& facts) {
  std::vector<std::string> out;
  if (!facts.listed_replicas || facts.listed_replicas->size() <= facts.replica_states.size()) {
    return out;
  }
  for (const auto& listed : *facts.listed_replicas) {
    bool connected = false;
    for (const auto& [address, state] : facts.replica_states) {
      connected = connected || address == listed;
    }
    if (!connected) {
      out.push_back(listed);
    }
  }
  if (out.empty()) {
    out.push_back(fmt::format("{} of {} listed", facts.listed_replicas->size() - facts.replica_states.size(),
                              facts.listed_replicas->size()));
  }
  return out;
}

// How many rlock locks held now the history check looks at, among how many hashes.
constexpr int k_history_locks = 16;
constexpr std::size_t k_history_candidates = 64;

// Whether this user may keep the history of the rlock locks held on `node`
// now (facts.history_*): hashes found by SCAN, each read as `history` reads it
// (lua/history_read.lua). A hash the user may not read is someone else's.
void survey_history(redis::Client& client, const redis::Endpoint& node, ServerFacts& facts) {
  try {
    std::vector<std::string> candidates;
    std::string cursor = "0";
    for (int round = 0; round < 10 && candidates.size() < k_history_candidates; ++round) {
      auto reply = survey_command(client, node, {"SCAN", cursor, "COUNT", "1000", "TYPE", "hash"});
      cursor = detail::element(reply, 0).as_string();
      for (const auto& key : detail::element(reply, 1).elements) {
        if (candidates.size() < k_history_candidates && key.type == redis::Reply::Type::string) {
          candidates.push_back(key.str);
        }
      }
      if (cursor == "0") {
        break;
      }
    }
    for (const auto& name : candidates) {
      if (facts.history_checked >= k_history_locks) {
        break;
      }
      LockKeys keys;
      try {
        keys = keys_for(name);
      } catch (const UsageError&) {
        continue; // not a name rlock takes (a helper key, a name without a slot of its own)
      }
      History history;
      try {
        history = read_history(client, keys, 1);
      } catch (const RedisError& e) {
        if (denies_a_key(e)) {
          continue;
        }
        throw;
      }
      if (!history.ours) {
        continue;
      }
      ++facts.history_checked;
      if (history.access == LogAccess::unknown) {
        facts.history_unknown = true;
      } else if (history.access != LogAccess::writable) {
        facts.history_problems.emplace_back(keys.log, history.access);
      }
    }
  } catch (const RedisError& e) {
    facts.history_error = reason_of(e);
  }
}

} // namespace

ServerIdentity server_identity(const std::string& info_server) {
  auto field = [&](const std::string& name) {
    return printable(info_field(info_server, name).value_or("").substr(0, 64));
  };
  ServerIdentity out;
  out.redis_version = field("redis_version");
  out.name = field("server_name");
  // A name is a word: anything else is no name (and no field to read).
  bool word = !out.name.empty() && std::all_of(out.name.begin(), out.name.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '_' || c == '-';
  });
  if (word && out.name != "redis") {
    out.version = field(out.name + "_version");
  }
  if (out.version.empty()) {
    out.name = "redis";
    out.version = out.redis_version;
  }
  return out;
}

ServerFacts survey(redis::Client& client, const redis::Endpoint& node, const std::string& topology) {
  ServerFacts facts;
  facts.server = node.display();
  facts.topology = topology;
  // INFO first: a server that cannot be reached throws from here.
  try {
    auto server = survey_command(client, node, {"INFO", "server"}).as_string();
    auto identity = server_identity(server);
    facts.server_name = identity.name;
    facts.version = identity.version;
    facts.redis_version = identity.redis_version;
    facts.run_id = printable(info_field(server, "run_id").value_or("").substr(0, 64));
    auto replication = survey_command(client, node, {"INFO", "replication"}).as_string();
    facts.role = info_field(replication, "role").value_or("");
    if (auto replicas = info_field(replication, "connected_slaves")) {
      facts.connected_replicas = std::stoll(*replicas);
    }
    for (const auto& replica : redis::connected_replicas(replication)) {
      facts.replica_states.emplace_back(replica_address(replica.node), printable(replica.state));
    }
  } catch (const RedisError& e) {
    if (e.kind() == RedisErrorKind::connect || e.kind() == RedisErrorKind::timeout ||
        e.kind() == RedisErrorKind::closed || e.kind() == RedisErrorKind::io) {
      throw;
    }
    facts.info_error = reason_of(e);
  } catch (const std::exception& e) { // an unparsable number in INFO
    facts.info_error = e.what();
  }
  try {
    facts.maxmemory_policy = config_value(survey_command(client, node, {"CONFIG", "GET", "maxmemory-policy"}));
    facts.save = config_value(survey_command(client, node, {"CONFIG", "GET", "save"}));
    facts.appendonly = config_value(survey_command(client, node, {"CONFIG", "GET", "appendonly"}));
    for (auto* value : {&facts.maxmemory_policy, &facts.save, &facts.appendonly}) {
      if (*value) {
        **value = printable(**value); // shown to people as it is
      }
    }
    if (auto min = config_value(survey_command(client, node, {"CONFIG", "GET", "min-replicas-to-write"}))) {
      facts.min_replicas_to_write = std::stoll(*min);
    }
  } catch (const RedisError& e) {
    facts.config_error = reason_of(e);
  } catch (const std::exception& e) {
    facts.config_error = e.what();
  }
  if (topology.starts_with("cluster")) {
    try {
      auto view = redis::cluster_view(survey_command(client, node, {"CLUSTER", "NODES"}), node.host);
      if (view) {
        facts.listed_replicas.emplace();
        for (const auto& replica : view->replicas) {
          facts.listed_replicas->push_back(replica_address(replica));
        }
      } else {
        facts.cluster_error = "CLUSTER NODES has no line for the node itself";
      }
    } catch (const RedisError& e) {
      facts.cluster_error = reason_of(e);
    }
  }
  survey_history(client, node, facts);
  try {
    long long before = wall_ms();
    auto time = survey_command(client, node, {"TIME"});
    long long after = wall_ms();
    if (time.is_array() && time.elements.size() == 2) {
      long long server_ms = time.elements[0].as_integer() * 1000 + time.elements[1].as_integer() / 1000;
      facts.clock_offset_ms = server_ms - (before + after) / 2;
    }
  } catch (const RedisError& e) {
    facts.time_error = reason_of(e);
  }
  return facts;
}

std::optional<std::pair<std::size_t, std::size_t>> same_run_id(const std::vector<ServerFacts>& facts) {
  for (std::size_t j = 1; j < facts.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (!facts[j].run_id.empty() && facts[i].run_id == facts[j].run_id) {
        return std::make_pair(i, j);
      }
    }
  }
  return std::nullopt;
}

std::vector<Finding> judge_server(const ServerFacts& facts) {
  std::vector<Finding> out;
  if (!facts.unreachable.empty()) {
    out.push_back(
        finding(facts, "reachable", "connection", Verdict::unsafe,
                fmt::format("cannot reach it: {}; its locks cannot be taken or checked", facts.unreachable)));
    return out;
  }
  out.push_back(
      finding(facts, "topology", facts.topology, Verdict::ok,
              facts.topology.starts_with("cluster")
                  ? "each lock lives on its hash slot's primary; a failover keeps what reached the replica"
              : facts.topology.starts_with("sentinel")
                  ? "a failover promotes a replica: a lock not yet replicated is lost with the old primary"
              : facts.topology.starts_with("redlock")
                  ? "one vote of the Redlock quorum: a lock is held while a majority of the masters hold it, "
                    "so each master must keep what it was given (the checks below)"
                  : "one server holds every lock"));

  // Version: the server's own, named as it names it; what rlock needs is
  // judged by redis_version (Valkey's: the Redis it answers as).
  if (facts.version.empty()) {
    out.push_back(cannot_check(facts, "version", "redis_version", "the version", facts.info_error, "INFO"));
  } else {
    const std::string name = facts.server_name.empty() ? "redis" : facts.server_name;
    const std::string setting = name + "_version " + facts.version;
    const std::string& compatible = facts.redis_version.empty() ? facts.version : facts.redis_version;
    const std::string as = name == "redis" ? "" : fmt::format(" (it answers as Redis {})", compatible);
    auto [major, minor] = version_of(compatible);
    if (major < 3 || (major == 3 && minor < 2)) {
      out.push_back(finding(facts, "version", setting, Verdict::unsafe,
                            "rlock's scripts read TIME before writing, which needs Redis 3.2 or later" + as));
    } else if (major < 7) {
      out.push_back(
          finding(facts, "version", setting, Verdict::ok,
                  "every rlock feature works; a Redis 7+ Cluster adds sharded pub/sub for waiters" + as));
    } else {
      out.push_back(finding(facts, "version", setting, Verdict::ok, "every rlock feature works" + as));
    }
  }

  // Eviction.
  if (!facts.maxmemory_policy) {
    out.push_back(cannot_check(facts, "eviction", "maxmemory-policy", "maxmemory-policy", facts.config_error,
                               "CONFIG GET"));
  } else if (*facts.maxmemory_policy == "noeviction") {
    out.push_back(finding(facts, "eviction", "maxmemory-policy noeviction", Verdict::ok,
                          "keys are never evicted: a full server refuses new locks (OOM) instead"));
  } else {
    const bool all_keys = facts.maxmemory_policy->starts_with("allkeys");
    out.push_back(
        finding(facts, "eviction", "maxmemory-policy " + *facts.maxmemory_policy, Verdict::unsafe,
                fmt::format("under memory pressure Redis evicts {}: an evicted lock is free while its "
                            "holder still runs; use noeviction",
                            all_keys ? "any key, locks too" : "keys with a TTL, and every lock has one")));
  }

  // Persistence.
  if (!facts.save || !facts.appendonly) {
    out.push_back(cannot_check(facts, "persistence", "save, appendonly", "persistence", facts.config_error,
                               "CONFIG GET"));
  } else if (*facts.appendonly == "yes") {
    out.push_back(finding(facts, "persistence", "appendonly yes", Verdict::ok,
                          "locks survive a restart (up to appendfsync's last second)"));
  } else if (facts.save->empty()) {
    out.push_back(finding(facts, "persistence", "save \"\", appendonly no", Verdict::unsafe,
                          "no persistence: a restart drops every lock while its holders still run"));
  } else {
    out.push_back(
        finding(facts, "persistence", fmt::format("save \"{}\", appendonly no", *facts.save), Verdict::warning,
                "snapshots only: a restart drops the locks taken since the last snapshot; appendonly "
                "yes keeps them"));
  }

  // Replication.
  if (auto missing = listed_not_connected(facts); !missing.empty()) {
    std::string names;
    for (const auto& name : missing) {
      names += (names.empty() ? "" : ", ") + name;
    }
    out.push_back(finding(
        facts, "replication",
        fmt::format("replica{} {} listed by the cluster, not connected", missing.size() > 1 ? "s" : "", names),
        Verdict::unsafe,
        fmt::format("CLUSTER NODES lists {} replica{} of this primary, {} connected (INFO replication): a "
                    "replica whose link is down can still be promoted by a failover, without the locks taken "
                    "since; {}",
                    facts.listed_replicas->size(), facts.listed_replicas->size() == 1 ? "" : "s",
                    facts.replica_states.size(),
                    facts.replica_sync.empty()
                        ? "rlock's replica sync is off, so such locks are lost then"
                        : "rlock refuses to take or renew a lock here until it is back (no replica acknowledges)")));
  }
  if (!facts.cluster_error.empty()) {
    out.push_back(cannot_check(facts, "replication", "CLUSTER NODES", "the replicas the cluster may promote",
                               facts.cluster_error, "CLUSTER NODES"));
  }
  if (facts.connected_replicas && *facts.connected_replicas > 0) {
    // rlock's own replica sync covers what min-replicas-to-write would (for
    // its locks), whether or not that setting can be read.
    if ((!facts.min_replicas_to_write || *facts.min_replicas_to_write == 0) && !facts.replica_sync.empty()) {
      out.push_back(finding(
          facts, "replication",
          fmt::format("{} replicas, min-replicas-to-write {}; rlock waits for {}", *facts.connected_replicas,
                      facts.min_replicas_to_write ? std::to_string(*facts.min_replicas_to_write) : "unknown",
                      facts.replica_sync),
          Verdict::ok,
          "a lock is taken or renewed only once a replica has it; still lost if a failover promotes a replica "
          "that did not acknowledge it (WAIT is best effort)"));
    } else if (!facts.min_replicas_to_write) {
      out.push_back(
          finding(facts, "replication", fmt::format("{} replicas", *facts.connected_replicas), Verdict::warning,
                  fmt::format("cannot check min-replicas-to-write: {}; rlock's replica sync is off",
                              facts.config_error.empty() ? "CONFIG GET says nothing" : facts.config_error)));
    } else if (*facts.min_replicas_to_write == 0) {
      out.push_back(
          finding(facts, "replication",
                  fmt::format("{} replicas, min-replicas-to-write 0; rlock's replica sync is off",
                              *facts.connected_replicas),
                  Verdict::warning,
                  "replication is asynchronous: a failover can promote a replica that never got a lock; set "
                  "min-replicas-to-write or drop --sync-replicas 0 / RLOCK_SYNC_REPLICAS=0"));
    } else {
      out.push_back(finding(facts, "replication",
                            fmt::format("{} replicas, min-replicas-to-write {}", *facts.connected_replicas,
                                        *facts.min_replicas_to_write),
                            Verdict::ok, "writes are refused unless enough replicas are connected"));
    }
  } else if (facts.connected_replicas && facts.listed_replicas && !facts.listed_replicas->empty()) {
    // every replica listed is cut off: said above
  } else if (facts.connected_replicas) {
    out.push_back(finding(facts, "replication", "no replicas", Verdict::ok, "nothing to fail over to"));
  } else {
    out.push_back(
        cannot_check(facts, "replication", "connected_slaves", "replicas", facts.info_error, "INFO"));
  }

  // History: optional, so never unsafe.
  if (!facts.history_enabled) {
    out.push_back(finding(facts, "history", "RLOCK_HISTORY_MAXLEN=0", Verdict::ok, "no history is written"));
  } else if (!facts.history_error.empty()) {
    out.push_back(cannot_check(facts, "history", "rlock_log:{NAME}", "the history keys", facts.history_error, "SCAN"));
  } else if (!facts.history_problems.empty()) {
    std::string keys;
    for (std::size_t i = 0; i < facts.history_problems.size() && i < 3; ++i) {
      const auto& [key, access] = facts.history_problems[i];
      keys += fmt::format("{}{} ({})", i == 0 ? "" : ", ", printable(key),
                          access == LogAccess::not_stream ? "not a stream"
                          : access == LogAccess::no_write ? "no write permission"
                                                          : "no permission");
    }
    if (facts.history_problems.size() > 3) {
      keys += fmt::format(", {} more", facts.history_problems.size() - 3);
    }
    const auto& first = facts.history_problems.front();
    out.push_back(finding(
        facts, "history",
        fmt::format("{} of {} rlock lock{} held now", facts.history_problems.size(), facts.history_checked,
                    facts.history_checked == 1 ? "" : "s"),
        Verdict::warning,
        fmt::format("their history is not written: {}; the locks work without it (rlock warns once). {}",
                    keys,
                    first.second == LogAccess::not_stream
                        ? std::string("Delete a key that is not a stream to let rlock write it")
                        : fmt::format("To keep it: {}{} (for names under a prefix, docs/security.md's "
                                      "~rlock_log:{{PREFIX* pattern)",
                                      printable(history_acl(facts.user, first.first)),
                                      first.second == LogAccess::no_write ? " +xadd" : ""))));
  } else if (facts.history_checked == 0) {
    out.push_back(finding(facts, "history", "rlock_log:{NAME}", Verdict::ok,
                          "no rlock lock is held now whose history key this user's access could be checked on"));
  } else {
    out.push_back(finding(
        facts, "history",
        fmt::format("{} rlock lock{} held now", facts.history_checked, facts.history_checked == 1 ? "" : "s"),
        Verdict::ok,
        facts.history_unknown
            ? "this user may read their history; whether it may append to it, Redis before 7.0 cannot tell"
            : "this user may write their history"));
  }

  // Clock.
  if (!facts.clock_offset_ms) {
    out.push_back(cannot_check(facts, "clock", "TIME", "the server's clock", facts.time_error, "TIME"));
  } else {
    long long offset = *facts.clock_offset_ms;
    bool far = offset > k_clock_warning_ms || offset < -k_clock_warning_ms;
    out.push_back(finding(facts, "clock", fmt::format("server clock {:+}ms from this host's", offset),
                          far ? Verdict::warning : Verdict::ok,
                          far ? "records and times shown are the server's; a server clock that jumps expires "
                                "leases early (Redis expires keys by wall clock)"
                              : "within 2s of this host's"));
  }
  return out;
}

} // namespace rlock::lock
