// Issue 24: the default replica sync of acquire and renew (required_sync), its
// timeout (automatic_sync_timeout) and the INFO replication reply it learns the
// replica count from (replicas_of_info). Made-up values only.
#include <rlock/redis/client.hpp>
#include <rlock/redis/connection.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/slots.hpp>

#include <doctest/doctest.h>

#include "replies.hpp"

using rlock::Millis;
using rlock::redis::Reply;
using rlock::test::array;
using rlock::test::str;
using rlock::redis::SyncReplicas;
using rlock::redis::automatic_sync_timeout;
using rlock::redis::required_sync;
using rlock::redis::replicas_of_info;

namespace {


} // namespace

TEST_CASE("automatic_sync_timeout: a tenth of the lease, at most 1s, at least 1ms") {
  CHECK(automatic_sync_timeout(Millis(30'000)) == Millis(1000));
  CHECK(automatic_sync_timeout(Millis(10'000)) == Millis(1000));
  CHECK(automatic_sync_timeout(Millis(5'000)) == Millis(500));
  CHECK(automatic_sync_timeout(Millis(1'000)) == Millis(100));
  CHECK(automatic_sync_timeout(Millis(5)) == Millis(1)); // WAIT 0 would block forever
  CHECK(automatic_sync_timeout(Millis(0)) == Millis(1));
  auto a = SyncReplicas::automatic_for(Millis(2'000));
  CHECK(a.automatic);
  CHECK(a.count == 1);
  CHECK(a.timeout == Millis(200));
}

TEST_CASE("required_sync: the default waits for one replica only where the primary has replicas") {
  const auto automatic = SyncReplicas::automatic_for(Millis(30'000));
  SUBCASE("replicas known > 0: one acknowledgement within the automatic timeout") {
    for (long long n : {1LL, 2LL, 5LL}) {
      auto r = required_sync(automatic, n);
      CHECK(r.count == 1);
      CHECK(r.timeout == Millis(1000));
      CHECK(r.automatic);
    }
  }
  SUBCASE("no replicas, or not known yet (or INFO refused): no WAIT") {
    CHECK(required_sync(automatic, 0).count == 0);
    CHECK(required_sync(automatic, std::nullopt).count == 0);
    CHECK(required_sync(automatic, -1).count == 0);
  }
  SUBCASE("explicit --sync-replicas N/DUR: as asked, whatever the count") {
    SyncReplicas asked{2, Millis(500), false};
    for (auto n : {std::optional<long long>{}, std::optional<long long>{0}, std::optional<long long>{3}}) {
      auto r = required_sync(asked, n);
      CHECK(r.count == 2);
      CHECK(r.timeout == Millis(500));
      CHECK_FALSE(r.automatic);
    }
  }
  SUBCASE("--sync-replicas 0 (or RLOCK_SYNC_REPLICAS=0): never, even with replicas") {
    SyncReplicas off{0, Millis(1000), false};
    CHECK(required_sync(off, 3).count == 0);
    CHECK(required_sync(off, std::nullopt).count == 0);
  }
  SUBCASE("what every other request passes (release, status...): nothing") {
    CHECK(required_sync(SyncReplicas{}, 4).count == 0);
  }
}

TEST_CASE("replicas_of_info: how many replicas INFO replication names") {
  auto info = [](std::string text) { return str(std::move(text)); };
  CHECK(replicas_of_info(info("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n")) == 0);
  CHECK(replicas_of_info(info("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
                              "slave0:ip=127.0.0.1,port=7001,state=online,offset=1,lag=0\r\n")) == 2);
  CHECK(replicas_of_info(info("role:slave\r\nmaster_host:127.0.0.1\r\nconnected_slaves:1\r\n")) == 0); // chained
  CHECK(replicas_of_info(info("role:master\nconnected_slaves:1")) == 1); // no CR, no final newline
  Reply error;
  error.type = Reply::Type::error;
  error.str = "NOPERM this user has no permissions to run the 'info' command";
  CHECK_FALSE(replicas_of_info(error).has_value());
  CHECK_FALSE(replicas_of_info(info("")).has_value());
  CHECK_FALSE(replicas_of_info(info("role:master\r\n")).has_value());                        // no count
  CHECK_FALSE(replicas_of_info(info("role:master\r\nconnected_slaves:-1\r\n")).has_value()); // hostile
  CHECK_FALSE(replicas_of_info(info("role:master\r\nconnected_slaves:99999999999\r\n")).has_value());
  CHECK_FALSE(replicas_of_info(info("role:master\r\nconnected_slaves:1x\r\n")).has_value());
  CHECK_FALSE(replicas_of_info(info("xrole:master\r\nxconnected_slaves:1\r\n")).has_value()); // not a field
  CHECK_FALSE(replicas_of_info(array({str("master")})).has_value());
}

TEST_CASE("sentinel_replicas: the replicas a failover may promote, link up or not") {
  auto replica = [](const char* flags, const char* link, const char* role = "slave") {
    return array({str("name"), str("127.0.0.1:7001"), str("flags"), str(flags), str("role-reported"), str(role),
                  str("master-link-status"), str(link)});
  };
  using rlock::redis::sentinel_replicas;
  CHECK(sentinel_replicas(array({})) == 0);
  CHECK(sentinel_replicas(array({replica("slave", "ok")})) == 1);
  CHECK(sentinel_replicas(array({replica("slave", "err")})) == 1); // its link is down: still promotable
  CHECK(sentinel_replicas(array({replica("s_down,slave", "err"), replica("slave", "ok")})) == 1);
  CHECK(sentinel_replicas(array({replica("s_down,slave,disconnected", "err")})) == 0);
  CHECK(sentinel_replicas(array({replica("slave,disconnected", "ok")})) == 0);
  CHECK(sentinel_replicas(array({array({str("name"), str("x")})})) == 0); // no flags: not counted
  // the old primary after a failover, not reconfigured yet: it still says master
  CHECK(sentinel_replicas(array({replica("slave", "err", "master")})) == 0);
  CHECK_FALSE(sentinel_replicas(str("ERR unknown")).has_value());
  CHECK_FALSE(sentinel_replicas(array({str("slave")})).has_value());
}

// Issue 33: a Cluster primary's replicas, from the cluster's own view.
TEST_CASE("cluster_view: the replicas a Cluster failover may promote, link up or not") {
  using rlock::redis::cluster_view;
  const std::string primary_a = "aaaa";
  auto line = [](const std::string& id, const std::string& address, const std::string& flags,
                 const std::string& primary, const std::string& link, const std::string& slots) {
    return id + " " + address + " " + flags + " " + primary + " 0 1795732663883 3 " + link + (slots.empty() ? "" : " " + slots) + "\n";
  };
  const std::string a = line(primary_a, "127.0.0.1:7000@17000", "myself,master", "-", "connected", "0-5460");
  const std::string b = line("bbbb", "127.0.0.1:7001@17001", "master", "-", "connected", "5461-16383");
  SUBCASE("a replica whose link to the primary is down is listed all the same (the issue's cut link)") {
    auto view = cluster_view(str(a + b + line("cccc", "127.0.0.1:7003@17003", "slave", primary_a, "connected", "") +
                                 line("dddd", "127.0.0.1:7004@17004", "slave", "bbbb", "connected", "")));
    REQUIRE(view.has_value());
    CHECK(view->primary);
    REQUIRE(view->replicas.size() == 1);
    CHECK(view->replicas[0].host == "127.0.0.1");
    CHECK(view->replicas[0].port == 7003);
  }
  SUBCASE("fail?, disconnected bus and a hostname still count; fail, noaddr, handshake do not") {
    auto view = cluster_view(str(a + line("c1", "127.0.0.1:7003@17003,host-c", "slave,fail?", primary_a, "disconnected", "") +
                                 line("c2", "127.0.0.1:7004@17004", "slave,fail", primary_a, "disconnected", "") +
                                 line("c3", ":0@0", "slave,noaddr", primary_a, "disconnected", "") +
                                 line("c4", "127.0.0.1:7006@17006", "handshake,slave", primary_a, "connected", "") +
                                 line("c5", "[::1]:7007@17007", "slave", primary_a, "connected", "") +
                                 line("c6", "::1:7008@17008", "slave", primary_a, "connected", "")));
    REQUIRE(view.has_value());
    REQUIRE(view->replicas.size() == 3);
    CHECK(view->replicas[0].port == 7003);
    CHECK(view->replicas[2].host == "::1");
    CHECK(view->replicas[2].port == 7008);
  }
  SUBCASE("no replicas; asked on a replica; an empty own address") {
    auto none = cluster_view(str(a + b));
    REQUIRE(none.has_value());
    CHECK(none->replicas.empty());
    auto replica = cluster_view(str(line("cccc", "127.0.0.1:7003@17003", "myself,slave", primary_a, "connected", "") + a));
    REQUIRE(replica.has_value());
    CHECK_FALSE(replica->primary);
    CHECK(replica->replicas.empty());
    auto own = cluster_view(str(line("x", ":7000@17000", "myself,master", "-", "connected", "") +
                                line("y", ":7003@17003", "slave", "x", "connected", "")),
                            "10.0.0.1");
    REQUIRE(own.has_value());
    REQUIRE(own->replicas.size() == 1);
    CHECK(own->replicas[0].host == "10.0.0.1");
  }
  SUBCASE("not a cluster, refused, or not a view: unknown") {
    Reply error;
    error.type = Reply::Type::error;
    error.str = "ERR This instance has cluster support disabled";
    CHECK_FALSE(cluster_view(error).has_value());
    CHECK_FALSE(cluster_view(str("")).has_value());
    CHECK_FALSE(cluster_view(str(b)).has_value()); // no myself line
    CHECK_FALSE(cluster_view(array({str("myself,master")})).has_value());
    CHECK_FALSE(cluster_view(str("- 127.0.0.1:1@1 myself,master - 0 0 0 connected\n")).has_value());
  }
  SUBCASE("hostile: a replica line with a bad address is still counted, a huge view is bounded") {
    auto view = cluster_view(str(a + line("c", "127.0.0.1:99999999@1", "slave", primary_a, "connected", "")));
    REQUIRE(view.has_value());
    CHECK(view->replicas.size() == 1);
    std::string many = a;
    for (int i = 0; i < 120'000; ++i) {
      many += "r 127.0.0.1:1@1 slave aaaa 0 0 0 connected\n";
    }
    auto big = cluster_view(str(many));
    REQUIRE(big.has_value());
    CHECK(big->replicas.size() < 100'000);
  }
}

TEST_CASE("connected_replicas: INFO replication's slaveN lines, with their state") {
  using rlock::redis::connected_replicas;
  auto out = connected_replicas("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
                                "slave0:ip=127.0.0.1,port=7003,state=online,offset=10,lag=0\r\n"
                                "slave1:ip=10.0.0.2,port=7004,state=wait_bgsave,offset=0,lag=0\r\n"
                                "slaves:junk\r\nslave_read_only:1\r\nmaster_repl_offset:10\r\n");
  REQUIRE(out.size() == 2);
  CHECK(out[0].node.host == "127.0.0.1");
  CHECK(out[0].node.port == 7003);
  CHECK(out[0].state == "online");
  CHECK(out[1].node.host == "10.0.0.2");
  CHECK(out[1].state == "wait_bgsave");
  CHECK(connected_replicas("role:master\nconnected_slaves:0\n").empty());
}

// Issue 44 (fuzz_info): a port out of range was kept as read (-2, 99999).
TEST_CASE("connected_replicas: a port out of range is unreadable (0)") {
  using rlock::redis::connected_replicas;
  auto out = connected_replicas("slave0:ip=10.0.0.1,port=-2,state=online\r\n"
                                "slave1:ip=10.0.0.2,port=99999,state=online\r\n"
                                "slave2:ip=10.0.0.3,port=65535,state=online\r\n"
                                "slave3:ip=10.0.0.4,port=4294967303,state=online\r\n");
  REQUIRE(out.size() == 4);
  CHECK(out[0].node.port == 0);
  CHECK(out[1].node.port == 0);
  CHECK(out[2].node.port == 65535);
  CHECK(out[3].node.port == 0);
}
