#include <rlock/lock/doctor.hpp>

#include <doctest/doctest.h>

#include <algorithm>

using rlock::lock::Finding;
using rlock::lock::judge_server;
using rlock::lock::ServerFacts;

namespace {

// A well-kept standalone server.
ServerFacts healthy() {
  ServerFacts facts;
  facts.server = "redis://127.0.0.1:6379";
  facts.topology = "standalone";
  facts.version = "7.0.15";
  facts.maxmemory_policy = "noeviction";
  facts.save = "3600 1";
  facts.appendonly = "yes";
  facts.min_replicas_to_write = 0;
  facts.role = "master";
  facts.connected_replicas = 0;
  facts.clock_offset_ms = 3;
  return facts;
}

const Finding& about(const std::vector<Finding>& findings, const std::string& check) {
  auto it =
      std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.check == check; });
  REQUIRE(it != findings.end());
  return *it;
}

bool any_unsafe(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.verdict == rlock::lock::Verdict::unsafe; });
}

} // namespace

TEST_CASE("doctor: appendonly yes and noeviction pass") {
  auto findings = judge_server(healthy());
  CHECK_FALSE(any_unsafe(findings));
  CHECK(about(findings, "eviction").verdict == rlock::lock::Verdict::ok);
  CHECK(about(findings, "persistence").setting == "appendonly yes");
  CHECK(about(findings, "clock").verdict == rlock::lock::Verdict::ok);
}

TEST_CASE("doctor: an eviction policy that can evict locks is unsafe") {
  for (const char* policy : {"allkeys-lru", "volatile-ttl", "volatile-lru", "allkeys-random"}) {
    auto facts = healthy();
    facts.maxmemory_policy = policy;
    auto findings = judge_server(facts);
    const auto& f = about(findings, "eviction");
    CHECK(f.verdict == rlock::lock::Verdict::unsafe);
    CHECK(f.setting == std::string("maxmemory-policy ") + policy);
  }
}

TEST_CASE("doctor: no persistence is unsafe, snapshots only a warning") {
  auto facts = healthy();
  facts.save = "";
  facts.appendonly = "no";
  CHECK(about(judge_server(facts), "persistence").verdict == rlock::lock::Verdict::unsafe);
  facts.save = "3600 1";
  CHECK(about(judge_server(facts), "persistence").verdict == rlock::lock::Verdict::warning);
}

TEST_CASE("doctor: replicas without min-replicas-to-write, a far clock: warnings") {
  auto facts = healthy();
  facts.connected_replicas = 2;
  CHECK(about(judge_server(facts), "replication").verdict == rlock::lock::Verdict::warning); // rlock's replica sync off
  facts.replica_sync = "one replica's acknowledgement (the default)";
  CHECK(about(judge_server(facts), "replication").verdict == rlock::lock::Verdict::ok);
  CHECK(about(judge_server(facts), "replication").setting.find("rlock waits for one replica") != std::string::npos);
  // min-replicas-to-write unreadable (no CONFIG permission): rlock's own sync still covers it.
  facts.min_replicas_to_write.reset();
  CHECK(about(judge_server(facts), "replication").verdict == rlock::lock::Verdict::ok);
  CHECK(about(judge_server(facts), "replication").setting.find("min-replicas-to-write unknown") != std::string::npos);
  facts.replica_sync.clear();
  CHECK(about(judge_server(facts), "replication").verdict == rlock::lock::Verdict::warning);
  facts.min_replicas_to_write = 1;
  CHECK(about(judge_server(facts), "replication").verdict == rlock::lock::Verdict::ok);
  facts.clock_offset_ms = -5000;
  auto findings = judge_server(facts);
  const auto& clock = about(findings, "clock");
  CHECK(clock.verdict == rlock::lock::Verdict::warning);
  CHECK(clock.setting == "server clock -5000ms from this host's");
}

TEST_CASE("doctor: what cannot be read is a warning that says why, never unsafe") {
  auto facts = healthy(); // as the lock-only ACL user sees it: no CONFIG, INFO nor TIME
  facts.version.clear();
  facts.maxmemory_policy.reset();
  facts.save.reset();
  facts.appendonly.reset();
  facts.min_replicas_to_write.reset();
  facts.connected_replicas.reset();
  facts.clock_offset_ms.reset();
  facts.info_error = "no permission (NOPERM info)";
  facts.config_error = "no permission (NOPERM this user has no permissions to run the 'config|get' command)";
  facts.time_error = "no permission (NOPERM time)";
  auto findings = judge_server(facts);
  CHECK_FALSE(any_unsafe(findings));
  CHECK(about(findings, "eviction").why.starts_with("cannot check maxmemory-policy: no permission"));
  CHECK(about(findings, "persistence").why.starts_with("cannot check persistence: no permission"));
  CHECK(about(findings, "clock").verdict == rlock::lock::Verdict::warning);
  CHECK(about(findings, "replication").why == "cannot check replicas: no permission (NOPERM info)");
  CHECK(about(findings, "version").verdict == rlock::lock::Verdict::warning);
}

TEST_CASE("doctor: an old server or an unreachable Redlock master is unsafe") {
  auto facts = healthy();
  facts.version = "3.0.7";
  CHECK(about(judge_server(facts), "version").verdict == rlock::lock::Verdict::unsafe);
  facts.version = "3.2.0";
  CHECK(about(judge_server(facts), "version").verdict == rlock::lock::Verdict::ok);
  ServerFacts down;
  down.server = "redis://h:1";
  down.unreachable = "cannot connect: Connection refused";
  auto findings = judge_server(down);
  REQUIRE(findings.size() == 1);
  CHECK(findings.front().verdict == rlock::lock::Verdict::unsafe);
}

TEST_CASE("doctor: a Redlock master is one vote, not 'one server holds every lock'") {
  auto facts = healthy();
  facts.topology = "redlock master";
  auto why = about(judge_server(facts), "topology").why;
  CHECK(why.find("one server holds every lock") == std::string::npos);
  CHECK(why.find("majority") != std::string::npos);
  facts.topology = "standalone";
  CHECK(about(judge_server(facts), "topology").why == "one server holds every lock");
}

TEST_CASE("doctor: two masters with one run_id are one server") {
  using rlock::lock::same_run_id;
  auto a = healthy(), b = healthy(), c = healthy();
  a.run_id = "aaaa";
  b.run_id = "bbbb";
  c.run_id = "aaaa";
  CHECK_FALSE(same_run_id({a, b}));
  auto twice = same_run_id({a, b, c});
  REQUIRE(twice);
  CHECK(twice->first == 0);
  CHECK(twice->second == 2);
  ServerFacts unknown1, unknown2; // no run_id read (unreachable, INFO denied): not a match
  CHECK_FALSE(same_run_id({unknown1, unknown2}));
}

TEST_CASE("doctor: the server is named as it names itself (Redis, Valkey)") {
  using rlock::lock::server_identity;
  // Redis 7.0 and 8.0: no server_name.
  auto redis = server_identity(
      "# Server\r\nredis_version:8.0.2\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n");
  CHECK(redis.name == "redis");
  CHECK(redis.version == "8.0.2");
  CHECK(redis.redis_version == "8.0.2");
  // Valkey 8.1: redis_version is the Redis it answers as.
  auto valkey = server_identity("# "
                                "Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1."
                                "1\r\nvalkey_release_stage:ga\r\n");
  CHECK(valkey.name == "valkey");
  CHECK(valkey.version == "8.1.1");
  CHECK(valkey.redis_version == "7.2.4");
  // A server_name without its version field, or not a word: Redis's fields.
  auto nameless = server_identity("redis_version:7.2.4\r\nserver_name:other\r\n");
  CHECK(nameless.name == "redis");
  CHECK(nameless.version == "7.2.4");
  auto forged = server_identity("redis_version:7.2.4\r\nserver_name:a b\r\na b_version:9\r\n");
  CHECK(forged.name == "redis");
  CHECK(forged.version == "7.2.4");
  // Unprintable bytes from the server are not passed on.
  auto odd = server_identity("server_name:valkey\r\nvalkey_version:8.1\x1b[2J\r\nredis_version:7.2.4\r\n");
  CHECK(odd.version.find('\x1b') == std::string::npos);

  auto facts = healthy();
  facts.server_name = valkey.name;
  facts.version = valkey.version;
  facts.redis_version = valkey.redis_version;
  auto findings = judge_server(facts);
  const auto& f = about(findings, "version");
  CHECK(f.setting == "valkey_version 8.1.1");
  CHECK(f.verdict == rlock::lock::Verdict::ok);
  CHECK(f.why.find("Redis 7.2.4") != std::string::npos);
  facts.server_name = "redis";
  facts.version = facts.redis_version = "8.0.2";
  CHECK(about(judge_server(facts), "version").setting == "redis_version 8.0.2");
  // What rlock needs is judged by the Redis it answers as.
  facts.server_name = "valkey";
  facts.version = "9.0.0";
  facts.redis_version = "3.0.7";
  CHECK(about(judge_server(facts), "version").verdict == rlock::lock::Verdict::unsafe);
}

TEST_CASE("doctor: a replica the cluster lists but the primary does not see is unsafe (issue 33)") {
  auto facts = healthy();
  facts.topology = "cluster (3 primaries)";
  facts.replica_sync = "one replica's acknowledgement";
  facts.listed_replicas = std::vector<std::string>{"127.0.0.1:7004"};
  SUBCASE("connected: fine") {
    facts.connected_replicas = 1;
    facts.replica_states = {{"127.0.0.1:7004", "online"}};
    auto findings = judge_server(facts);
    CHECK_FALSE(any_unsafe(findings));
    CHECK(about(findings, "replication").setting.find("1 replicas") != std::string::npos);
  }
  SUBCASE("its link cut: the issue's 'no replicas: nothing to fail over to' is now a failure") {
    facts.connected_replicas = 0;
    auto findings = judge_server(facts);
    CHECK(any_unsafe(findings));
    const auto& f = about(findings, "replication");
    CHECK(f.verdict == rlock::lock::Verdict::unsafe);
    CHECK(f.setting == "replica 127.0.0.1:7004 listed by the cluster, not connected");
    CHECK(f.why.find("can still be promoted") != std::string::npos);
    CHECK(std::none_of(findings.begin(), findings.end(),
                       [](const Finding& x) { return x.setting == "no replicas"; }));
  }
  SUBCASE("two listed, one connected under another address: counted, not named") {
    facts.listed_replicas = std::vector<std::string>{"10.0.0.4:7004", "10.0.0.5:7005"};
    facts.connected_replicas = 1;
    facts.replica_states = {{"172.17.0.4:7004", "online"}};
    auto findings = judge_server(facts);
    const auto& f = about(findings, "replication");
    CHECK(f.verdict == rlock::lock::Verdict::unsafe);
    CHECK(f.setting.find("10.0.0.4:7004, 10.0.0.5:7005") != std::string::npos);
  }
  SUBCASE("a replica still syncing is connected: fine") {
    facts.connected_replicas = 1;
    facts.replica_states = {{"127.0.0.1:7004", "wait_bgsave"}};
    CHECK_FALSE(any_unsafe(judge_server(facts)));
  }
  SUBCASE("CLUSTER NODES refused: a warning that says why") {
    facts.listed_replicas.reset();
    facts.cluster_error = "no permission (NOPERM)";
    auto findings = judge_server(facts);
    CHECK(std::any_of(findings.begin(), findings.end(), [](const Finding& x) {
      return x.setting == "CLUSTER NODES" && x.verdict == rlock::lock::Verdict::warning &&
             x.why.find("NOPERM") != std::string::npos;
    }));
  }
}

TEST_CASE("doctor: a history this user may not write is a warning naming the key and the ACL, never unsafe (issue 30)") {
  using rlock::lock::LogAccess;
  using rlock::lock::Verdict;
  auto facts = healthy();
  facts.user = "rlock";
  facts.history_checked = 2;
  facts.history_problems = {{"rlock_log:{lock:a}", LogAccess::no_read}};
  auto findings = judge_server(facts);
  const auto& h = about(findings, "history");
  CHECK(h.verdict == Verdict::warning);
  CHECK(h.setting == "1 of 2 rlock locks held now");
  CHECK(h.why.find("rlock_log:{lock:a} (no permission)") != std::string::npos);
  CHECK(h.why.find("ACL SETUSER rlock ~rlock_log:{lock:a}") != std::string::npos);
  CHECK_FALSE(any_unsafe(findings));

  facts.history_problems = {{"rlock_log:{x*}", LogAccess::no_write}};
  CHECK(about(judge_server(facts), "history").why.find(R"(ACL SETUSER rlock ~rlock_log:{x[*]} +xadd)") !=
        std::string::npos);
  facts.history_problems = {{"rlock_log:{s}", LogAccess::not_stream}};
  CHECK(about(judge_server(facts), "history").why.find("not a stream") != std::string::npos);

  facts.history_problems.clear();
  CHECK(about(judge_server(facts), "history").verdict == Verdict::ok);
  CHECK(about(judge_server(facts), "history").why == "this user may write their history");
  facts.history_checked = 0;
  CHECK(about(judge_server(facts), "history").verdict == Verdict::ok);
  facts.history_enabled = false;
  CHECK(about(judge_server(facts), "history").setting == "RLOCK_HISTORY_MAXLEN=0");
}
