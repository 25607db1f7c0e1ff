// Issue 29: what a HELLO reply says of the server (server_info_of_hello), as
// Redis 7.0, Redis 8.0 and Valkey 8.1 answer it, and as a broken or hostile
// server might. Made-up replies in the servers' shapes.
#include <rlock/redis/connection.hpp>

#include <doctest/doctest.h>

#include "replies.hpp"

using rlock::redis::Reply;
using rlock::redis::server_info_of_hello;
using rlock::test::array;
using rlock::test::integer;
using rlock::test::str;

namespace {

// HELLO 2's map as a flat array, as RESP2 sends it.
Reply hello(const char* server, const char* version, const char* mode = "standalone") {
  return array({str("server"), str(server), str("version"), str(version), str("proto"), integer(2), str("id"),
                integer(7), str("mode"), str(mode), str("role"), str("master"), str("modules"), array({})});
}

} // namespace

TEST_CASE("HELLO: the server as it names itself") {
  auto redis7 = server_info_of_hello(hello("redis", "7.0.15"));
  CHECK(redis7.known);
  CHECK(redis7.name == "redis");
  CHECK(redis7.version == "7.0.15");
  CHECK(redis7.major() == 7);
  CHECK(redis7.mode == "standalone");
  CHECK(redis7.role == "master");

  auto redis8 = server_info_of_hello(hello("redis", "8.0.2", "cluster"));
  CHECK(redis8.name == "redis");
  CHECK(redis8.major() == 8);
  CHECK(redis8.mode == "cluster");

  // Valkey names itself and its own version (INFO's redis_version says 7.2.4).
  auto valkey = server_info_of_hello(hello("valkey", "8.1.1"));
  CHECK(valkey.known);
  CHECK(valkey.name == "valkey");
  CHECK(valkey.version == "8.1.1");
  CHECK(valkey.major() == 8);
}

TEST_CASE("HELLO: nothing known from what is not a HELLO reply; untrusted values bounded") {
  Reply error;
  error.type = Reply::Type::error;
  error.str = "ERR unknown command 'HELLO'";
  CHECK_FALSE(server_info_of_hello(error).known);
  CHECK_FALSE(server_info_of_hello(array({})).known);
  CHECK_FALSE(server_info_of_hello(array({str("server"), str("redis")})).known); // no mode
  auto odd = server_info_of_hello(array({str("server"), str(std::string(100, 'x') + "\x1b[2J"),
                                         str("version"), integer(8), str("mode"), str("standalone")}));
  CHECK(odd.known);
  CHECK(odd.name.size() <= 32);
  CHECK(odd.name.find('\x1b') == std::string::npos);
  CHECK(odd.version.empty()); // not a string: ignored
}
