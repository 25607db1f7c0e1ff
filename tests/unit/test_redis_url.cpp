#include <rlock/core/errors.hpp>
#include <rlock/redis/url.hpp>

#include <doctest/doctest.h>

#include <map>

using rlock::redis::Endpoint;
using rlock::redis::parse_url;

TEST_CASE("urls: redis:// forms") {
  auto ep = parse_url("redis://127.0.0.1:6380");
  CHECK(ep.transport == Endpoint::Transport::tcp);
  CHECK(ep.host == "127.0.0.1");
  CHECK(ep.port == 6380);
  CHECK(!ep.password);
  CHECK(ep.db == 0);

  ep = parse_url("redis://alice:p%40ss@localhost/3");
  CHECK(ep.user == "alice");
  CHECK(ep.password == "p@ss");
  CHECK(ep.port == 6379);
  CHECK(ep.db == 3);
  CHECK(ep.display() == "redis://alice@localhost:6379/3");

  ep = parse_url("redis://:secret@[::1]:7000");
  CHECK(ep.user.empty());
  CHECK(ep.password == "secret");
  CHECK(ep.host == "::1");
  CHECK(ep.port == 7000);
  CHECK(ep.display() == "redis://[::1]:7000");
  CHECK(ep.display().find("secret") == std::string::npos);
}

TEST_CASE("urls: unix sockets") {
  auto ep = parse_url("unix:///run/redis/redis.sock?db=2");
  CHECK(ep.transport == Endpoint::Transport::unix_socket);
  CHECK(ep.path == "/run/redis/redis.sock");
  CHECK(ep.db == 2);
  CHECK(ep.display() == "unix:///run/redis/redis.sock?db=2");
}

TEST_CASE("urls: malformed and not-yet-supported are usage errors without the password") {
  for (const char* bad : {"http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x",
                          "redis://h/db", "unix://relative.sock", "unix:///s?x=1", "127.0.0.1:6379",
                          "rediss://h:6379", "redis://u:pw@h:1%zz", "redis-sentinel://h:26379",
                          "redis-sentinel://u:pw@h:26379/", "redis-sentinel:///m", "redis-sentinel://h,/m",
                          "redis-sentinel://h:1,:2/m", "redis-sentinel://h:0/m", "redis-sentinel://h/m/x"}) {
    CAPTURE(bad);
    try {
      parse_url(bad);
      FAIL("accepted");
    } catch (const rlock::UsageError& e) {
      CHECK(std::string(e.what()).find("pw@") == std::string::npos);
    }
  }
}

TEST_CASE("urls: redis-sentinel:// names the sentinels, the master, and the primary's login and db") {
  auto ep = parse_url("redis-sentinel://app:s%40cret@10.0.0.1:26380,[::1],s3/my%20master/4");
  REQUIRE(ep.is_sentinel());
  CHECK(ep.sentinels ==
        std::vector<rlock::redis::HostPort>{{"10.0.0.1", 26380}, {"::1", 26379}, {"s3", 26379}});
  CHECK(ep.master == "my master");
  CHECK(ep.user == "app");
  CHECK(ep.password == "s@cret");
  CHECK(ep.db == 4);
  CHECK(ep.display() == "redis-sentinel://app@10.0.0.1:26380,[::1]:26379,s3:26379/my master/4");
  auto primary = ep.at({"10.0.0.9", 6390});
  CHECK_FALSE(primary.is_sentinel());
  CHECK(primary.display() == "redis://app@10.0.0.9:6390/4");
  CHECK(primary.password == "s@cret");
  CHECK(parse_url("redis-sentinel://h/m").sentinels == std::vector<rlock::redis::HostPort>{{"h", 26379}});
}

namespace {
std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
} // namespace

TEST_CASE("urls: flags, then RLOCK_URL, then REDIS_URL, then the default") {
  g_env.clear();
  CHECK(rlock::redis::choose_urls({}, fake_env) == std::vector<std::string>{"redis://127.0.0.1:6379"});
  g_env["REDIS_URL"] = "redis://r:1";
  CHECK(rlock::redis::choose_urls({}, fake_env) == std::vector<std::string>{"redis://r:1"});
  g_env["RLOCK_URL"] = "redis://a:1,redis://b:2";
  CHECK(rlock::redis::choose_urls({}, fake_env) == std::vector<std::string>{"redis://a:1", "redis://b:2"});
  CHECK(rlock::redis::choose_urls({"redis://f:3"}, fake_env) == std::vector<std::string>{"redis://f:3"});
  // A Sentinel URL's host list stays whole: a comma starts a URL only before a scheme.
  g_env["RLOCK_URL"] = "redis-sentinel://s1:1,s2:2/m,redis://b:2,unix:///s";
  CHECK(rlock::redis::choose_urls({}, fake_env) ==
        std::vector<std::string>{"redis-sentinel://s1:1,s2:2/m", "redis://b:2", "unix:///s"});
}
