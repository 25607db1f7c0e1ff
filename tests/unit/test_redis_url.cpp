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
                          "rediss://h:6379", "redis-sentinel://h:26379/m", "redis://u:pw@h:1%zz"}) {
    CAPTURE(bad);
    try {
      parse_url(bad);
      FAIL("accepted");
    } catch (const rlock::UsageError& e) {
      CHECK(std::string(e.what()).find("pw@") == std::string::npos);
    }
  }
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
}
