// Issue 24: the default replica sync of acquire and renew (required_sync), its
// timeout (automatic_sync_timeout) and the INFO replication reply it learns the
// replica count from (replicas_of_info). Made-up values only.
#include <rlock/redis/client.hpp>
#include <rlock/redis/connection.hpp>
#include <rlock/redis/reply.hpp>

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
