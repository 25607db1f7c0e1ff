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

TEST_CASE("urls: malformed ones are usage errors without the password") {
  for (const char* bad : {"http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x",
                          "redis://h/db", "unix://relative.sock", "unix:///s?x=1", "127.0.0.1:6379",
                          "rediss://", "rediss://u:pw@h:0", "redis://u:pw@h:1%zz", "redis-sentinel://h:26379",
                          "rediss-sentinel://u:pw@h:26379", "redis+tls://h", "rediss-sentinel://h,/m",
                          "redis-sentinel://u:pw@h:26379/", "redis-sentinel:///m", "redis-sentinel://h,/m",
                          "redis-sentinel://h:1,:2/m", "redis-sentinel://h:0/m", "redis-sentinel://h/m/x",
                          "redis-cluster://", "redis-cluster://h,", "redis-cluster://h:1,:2", "redis-cluster://h:0",
                          "redis-cluster://u:pw@h:1/3", "rediss-cluster://u:pw@h:1,/0", "redis-cluster://h/x"}) {
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

TEST_CASE("urls: redis-cluster:// names a Cluster's seed nodes, tried in turn (issue 33)") {
  auto ep = parse_url("redis-cluster://app:s%40cret@10.0.0.1:7000,[::1]:7001,n3");
  REQUIRE(ep.is_cluster());
  CHECK_FALSE(ep.is_sentinel());
  CHECK_FALSE(ep.tls);
  CHECK(ep.seeds == std::vector<rlock::redis::HostPort>{{"10.0.0.1", 7000}, {"::1", 7001}, {"n3", 6379}});
  CHECK(ep.host == "10.0.0.1");
  CHECK(ep.port == 7000);
  CHECK(ep.user == "app");
  CHECK(ep.password == "s@cret");
  CHECK(ep.db == 0);
  CHECK(ep.display() == "redis-cluster://app@10.0.0.1:7000,[::1]:7001,n3:6379");
  auto node = ep.at({"10.0.0.9", 7005});
  CHECK_FALSE(node.is_cluster());
  CHECK(node.display() == "redis://app@10.0.0.9:7005");
  CHECK(node.password == "s@cret");
  CHECK(parse_url("redis-cluster://h").seeds == std::vector<rlock::redis::HostPort>{{"h", 6379}});
  CHECK(parse_url("redis-cluster://h:1/").is_cluster());
  CHECK(parse_url("redis-cluster://h:1/0").db == 0);
  auto tls = parse_url("rediss-cluster://:pw@a:1,b:2");
  REQUIRE(tls.tls);
  REQUIRE(tls.is_cluster());
  CHECK(tls.display() == "rediss-cluster://a:1,b:2");
  REQUIRE(tls.at(tls.seeds[1]).tls);
  CHECK(tls.at(tls.seeds[1]).display() == "rediss://b:2");
  CHECK_THROWS_WITH_AS(parse_url("redis-cluster://h:1/2"),
                       "--url: a Redis Cluster has database 0 only (redis-cluster://HOST:PORT[,HOST:PORT...]) in "
                       "'redis-cluster://h:1/2'",
                       rlock::UsageError);
  // A comma list of plain redis:// URLs stays a Redlock: one URL names one server.
  CHECK_THROWS_WITH_AS(parse_url("redis://a:1,b:2"),
                       doctest::Contains("redis-cluster://HOST:PORT,HOST:PORT"), rlock::UsageError);
}

TEST_CASE("urls: rediss:// is redis:// with TLS, port 6379 by default as redis-cli") {
  auto ep = parse_url("rediss://alice:p%40ss@redis.example.com/2");
  REQUIRE(ep.tls);
  CHECK(*ep.tls == rlock::redis::TlsOptions{}); // the --tls-* options are filled in by the caller
  CHECK(ep.transport == Endpoint::Transport::tcp);
  CHECK(ep.host == "redis.example.com");
  CHECK(ep.port == 6379);
  CHECK(ep.user == "alice");
  CHECK(ep.password == "p@ss");
  CHECK(ep.db == 2);
  CHECK(ep.display() == "rediss://alice@redis.example.com:6379/2");

  ep = parse_url("rediss://:secret@[::1]:6380");
  REQUIRE(ep.tls);
  CHECK(ep.host == "::1");
  CHECK(ep.port == 6380);
  CHECK(ep.display() == "rediss://[::1]:6380");
  CHECK(parse_url("rediss://127.0.0.1").display() == "rediss://127.0.0.1:6379");

  CHECK_FALSE(parse_url("redis://h").tls);
  CHECK_FALSE(parse_url("redis-sentinel://h/m").tls);
  CHECK_FALSE(parse_url("unix:///s").tls);

  // Every node reached from a TLS URL (Cluster nodes, a Sentinel's primary)
  // gets the same TLS settings.
  ep.tls->ca_file = "/etc/ca.pem";
  ep.tls->server_name = "redis.internal";
  auto node = ep.at({"10.0.0.7", 7001});
  REQUIRE(node.tls);
  CHECK(*node.tls == *ep.tls);
  CHECK(node.display() == "rediss://10.0.0.7:7001");
  // Two Redlock URLs for the same server and port, one TLS, are different endpoints.
  CHECK(parse_url("rediss://h:1").display() != parse_url("redis://h:1").display());
}

TEST_CASE("urls: rediss-sentinel:// speaks TLS to the sentinels and to the primary") {
  auto ep = parse_url("rediss-sentinel://app:pw@10.0.0.1:26380,s2/mymaster/1");
  REQUIRE(ep.is_sentinel());
  REQUIRE(ep.tls);
  CHECK(ep.sentinels == std::vector<rlock::redis::HostPort>{{"10.0.0.1", 26380}, {"s2", 26379}});
  CHECK(ep.master == "mymaster");
  CHECK(ep.db == 1);
  CHECK(ep.display() == "rediss-sentinel://app@10.0.0.1:26380,s2:26379/mymaster/1");
  auto sentinel = ep.at(ep.sentinels[1]);
  CHECK(sentinel.tls);
  auto primary = ep.at({"10.0.0.9", 6390});
  REQUIRE(primary.tls);
  CHECK(primary.display() == "rediss://app@10.0.0.9:6390/1");
}

TEST_CASE("urls: without_password keeps the TLS scheme") {
  CHECK(rlock::redis::without_password("rediss://u:pw@h:1/2") == "rediss://u@h:1/2");
  CHECK(rlock::redis::without_password("rediss://:pw@h") == "rediss://h");
  CHECK(rlock::redis::without_password("rediss-sentinel://:pw@a,b/m") == "rediss-sentinel://a,b/m");
}

// Issue 44 (fuzz_url): a password holding '#', '?' or a space parsed as one,
// yet password_span stopped at that byte and found none, so scrub_argv, the
// records and CMD's URL (without_password) kept it.
TEST_CASE("urls: the password parse_url reads is the one password_span finds, whatever its bytes") {
  for (std::string password : {"pa#ss", "pa?ss", "pa ss", "#", "a?b#c d", "x@y#z"}) {
    for (std::string scheme : {"redis://", "rediss://", "redis-sentinel://", "redis-cluster://"}) {
      std::string url = scheme + "u:" + password + "@h1:7000" + (scheme == "redis-sentinel://" ? "/m" : "");
      CAPTURE(url);
      auto ep = parse_url(url);
      REQUIRE(ep.password);
      CHECK(*ep.password == password);
      auto span = rlock::redis::password_span(url);
      REQUIRE(span);
      CHECK(url.substr(span->first, span->second) == password);
      std::string bare = rlock::redis::without_password(url);
      CHECK(bare.find(password) == std::string::npos);
      CHECK_FALSE(parse_url(bare).password);
    }
  }
  // The fuzzer's own input: NUL bytes, a '#' before the first '@', another '@' after.
  const std::string found("redis://ul2:700\0\0\0#@\0\0\0\0\0\0@\0\0\0\0\0\0ho", 35);
  REQUIRE(parse_url(found).password);
  CHECK_FALSE(parse_url(rlock::redis::without_password(found)).password);
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
  g_env["RLOCK_URL"] = "rediss-sentinel://s1:1,s2:2/m,rediss://b:2";
  CHECK(rlock::redis::choose_urls({}, fake_env) ==
        std::vector<std::string>{"rediss-sentinel://s1:1,s2:2/m", "rediss://b:2"});
  // ... and so does a Cluster URL's seed list.
  g_env["RLOCK_URL"] = "redis-cluster://h1:7000,h2:7000,h3:7000";
  CHECK(rlock::redis::choose_urls({}, fake_env) ==
        std::vector<std::string>{"redis-cluster://h1:7000,h2:7000,h3:7000"});
  g_env["RLOCK_URL"] = "rediss-cluster://h1:7000,h2:7000,redis://b:2";
  CHECK(rlock::redis::choose_urls({}, fake_env) ==
        std::vector<std::string>{"rediss-cluster://h1:7000,h2:7000", "redis://b:2"});
  // Issue 19: an empty element is named as one (it was quoted as 'A,').
  for (std::string list : {"redis://a:1,,redis://b:2", "A,,B", "redis://a:1,", ",redis://a:1"}) {
    g_env["RLOCK_URL"] = list;
    CAPTURE(list);
    try {
      rlock::redis::choose_urls({}, fake_env);
      FAIL("no error");
    } catch (const rlock::UsageError& e) {
      CHECK(std::string(e.what()).find("is empty ('',") != std::string::npos);
      CHECK(std::string(e.what()).find("a:1,") == std::string::npos);
    }
  }
  g_env["RLOCK_URL"] = ":pw@x,,redis://b:2"; // the list is never shown: it may hold passwords
  CHECK_THROWS_WITH_AS(rlock::redis::choose_urls({}, fake_env), "RLOCK_URL: URL 2 of 3 is empty ('', from two "
                       "commas in a row or one at an end); separate URLs with single commas", rlock::UsageError);
}

TEST_CASE("urls: server_key names the server, not the db, user, password or spelling of the host") {
  using rlock::redis::server_key;
  auto key = [](const char* url) { return server_key(parse_url(url)); };
  CHECK(key("redis://127.0.0.1:6380/1") == key("redis://127.0.0.1:6380/2"));
  CHECK(key("redis://alice:pw@127.0.0.1:6380") == key("redis://127.0.0.1:6380"));
  CHECK(key("redis://LocalHost:6380") == key("redis://localhost:6380"));
  CHECK(key("rediss://h:6380") == key("redis://h:6380"));
  CHECK(key("unix:///tmp/r.sock?db=3") == key("unix:///tmp/r.sock"));
  CHECK(key("redis-sentinel://a:1,b:2/m") == key("redis-sentinel://b:2,a:1/m/4"));
  CHECK(key("redis://127.0.0.1:6380") != key("redis://127.0.0.1:6381"));
  CHECK(key("redis-sentinel://a:1/m") != key("redis-sentinel://a:1/n"));
  CHECK(key("redis-cluster://a:1,b:2") == key("rediss-cluster://B:2,a:1"));
  CHECK(key("redis-cluster://a:1,b:2") == "cluster:a:1,b:2");
}

TEST_CASE("urls: same_server finds two servers that share an address") {
  using rlock::redis::same_server;
  CHECK_FALSE(same_server({{"127.0.0.1:1"}, {"127.0.0.1:2"}, {"[::1]:1"}}));
  // localhost resolves to ::1 and 127.0.0.1: one of them is the other URL's
  auto twice = same_server({{"127.0.0.1:1"}, {"127.0.0.1:3"}, {"[::1]:1", "127.0.0.1:1"}});
  REQUIRE(twice);
  CHECK(twice->first == 0);
  CHECK(twice->second == 2);
  CHECK(twice->address == "127.0.0.1:1");
  CHECK_FALSE(same_server({{"a"}}));
  CHECK_FALSE(same_server({{}, {}}));
}

TEST_CASE("urls: server_addresses resolves a name to what an IP says") {
  using rlock::redis::same_server;
  using rlock::redis::server_addresses;
  auto ip = server_addresses(parse_url("redis://127.0.0.1:6390"));
  CHECK(ip == std::vector<std::string>{"127.0.0.1:6390"});
  auto v6 = server_addresses(parse_url("redis://[::1]:6390"));
  CHECK(v6 == std::vector<std::string>{"[::1]:6390"});
  auto name = server_addresses(parse_url("redis://localhost:6390"));
  CHECK(same_server({ip, name}).has_value()); // /etc/hosts names 127.0.0.1 localhost
  // A Cluster URL shares an address with each of its seeds (a cluster named twice is one server).
  auto cluster = server_addresses(parse_url("redis-cluster://127.0.0.1:6391,127.0.0.1:6390"));
  CHECK(cluster == std::vector<std::string>{"127.0.0.1:6391", "127.0.0.1:6390"});
  CHECK(same_server({cluster, ip}).has_value());
  auto missing = server_addresses(parse_url("unix:///nonexistent/rlock.sock"));
  CHECK(missing == std::vector<std::string>{"unix:/nonexistent/rlock.sock"});
}

TEST_CASE("urls: the same-server message names both URLs, never a password") {
  auto text = rlock::redis::same_server_message(parse_url("redis://u:secret@127.0.0.1:1/1"),
                                                parse_url("redis://localhost:1"), "127.0.0.1:1");
  CHECK(text.find("secret") == std::string::npos);
  CHECK(text.find("redis://u@127.0.0.1:1/1 and redis://localhost:1 are the same server (127.0.0.1:1)") !=
        std::string::npos);
}
