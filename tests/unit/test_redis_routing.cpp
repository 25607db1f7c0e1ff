// What a Cluster client routes by (CLUSTER SLOTS: redis::slot_map) and what
// Sentinel names as the primary (SENTINEL GET-MASTER-ADDR-BY-NAME:
// redis::sentinel_master), from made-up and hostile replies.
#include <rlock/redis/client.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/slots.hpp>

#include <doctest/doctest.h>

#include "replies.hpp"

using rlock::redis::HostPort;
using rlock::redis::Reply;
using rlock::test::array;
using rlock::test::integer;
using rlock::test::str;

namespace {

Reply range(long long first, long long last, Reply host, Reply port) {
  return array({integer(first), integer(last), array({std::move(host), std::move(port), str("id")})});
}

} // namespace

TEST_CASE("slot_map: each slot's primary, from CLUSTER SLOTS") {
  using rlock::redis::slot_map;
  auto map = slot_map(array({range(0, 5460, str("10.0.0.1"), integer(7000)),
                             range(5461, 16383, str(""), integer(7001)),
                             range(100, 200, str("10.0.0.1"), integer(7000))}),
                      "seed.example");
  REQUIRE(map.has_value());
  REQUIRE(map->masters.size() == 2);
  CHECK(map->masters[0] == HostPort{"10.0.0.1", 7000});
  CHECK(map->masters[1] == HostPort{"seed.example", 7001}); // an empty host: the node asked
  CHECK(map->slot_master.size() == 16384);
  CHECK(map->slot_master[0] == 0);
  CHECK(map->slot_master[5461] == 1);
  CHECK(map->slot_master[16383] == 1);

  SUBCASE("a node without an address serves nothing reachable") {
    auto partial = slot_map(array({range(0, 10, str("?"), integer(7000)), range(11, 20, str("h"), integer(0))}), "s");
    REQUIRE(partial.has_value());
    CHECK(partial->masters.empty());
    CHECK(partial->slot_master[0] == -1);
    CHECK(partial->slot_master[15] == -1);
  }
  SUBCASE("slot numbers and ports as strings of digits are read as numbers") {
    auto read = slot_map(array({array({str("0"), str("16383"), array({str("h"), str("7000")})})}), "s");
    REQUIRE(read.has_value());
    CHECK(read->slot_master[16383] == 0);
  }
  SUBCASE("anything that is not a slot map is refused, never half taken") {
    CHECK_FALSE(slot_map(str("ERR This instance has cluster support disabled"), "s"));
    CHECK_FALSE(slot_map(array({range(-1, 5, str("h"), integer(1))}), "s"));
    CHECK_FALSE(slot_map(array({range(0, 16384, str("h"), integer(1))}), "s"));
    CHECK_FALSE(slot_map(array({range(10, 5, str("h"), integer(1))}), "s"));
    CHECK_FALSE(slot_map(array({range(0, 5, integer(1), integer(1))}), "s"));
    CHECK_FALSE(slot_map(array({range(0, 5, str(std::string(256, 'h')), integer(1))}), "s"));
    CHECK_FALSE(slot_map(array({range(0, 5, str("h"), str("port"))}), "s"));
    CHECK_FALSE(slot_map(array({array({integer(0), integer(5)})}), "s"));
    CHECK_FALSE(slot_map(array({str("0-5")}), "s"));
  }
}

TEST_CASE("sentinel_master: the primary's host and port, or nothing") {
  using rlock::redis::sentinel_master;
  auto primary = sentinel_master(array({str("10.0.0.5"), str("6380")}));
  REQUIRE(primary.has_value());
  CHECK(*primary == HostPort{"10.0.0.5", 6380});
  CHECK_FALSE(sentinel_master(Reply{})); // nil: no master of that name
  CHECK_FALSE(sentinel_master(array({str("h")})));
  CHECK_FALSE(sentinel_master(array({str("h"), str("6380"), str("x")})));
  CHECK_FALSE(sentinel_master(array({str("h"), integer(6380)})));
  CHECK_FALSE(sentinel_master(array({str(""), str("6380")})));
  CHECK_FALSE(sentinel_master(array({str(std::string(256, 'h')), str("6380")})));
  CHECK_FALSE(sentinel_master(array({str("h"), str("0")})));
  CHECK_FALSE(sentinel_master(array({str("h"), str("65536")})));
  CHECK_FALSE(sentinel_master(array({str("h"), str("63 80")})));
}
