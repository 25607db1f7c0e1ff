// URLs (redis/url parse_url, every scheme: redis, rediss, unix, the
// -sentinel and -cluster ones), and what rlock makes of one: its display (never
// the password), its server key, the URL without its password (handed on to
// CMD and records: it must name the same server, with no password).

#include "fuzz.hpp"

#include <rlock/redis/url.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view url = fuzz::bytes(data, size);
  auto span = redis::password_span(url);
  if (span) {
    FUZZ_CHECK(span->first <= url.size() && span->second <= url.size() - span->first);
  }
  std::string bare = redis::without_password(url);
  redis::Endpoint endpoint;
  try {
    endpoint = redis::parse_url(url);
  } catch (const UsageError&) {
    return 0;
  }
  FUZZ_CHECK(endpoint.transport == redis::Endpoint::Transport::unix_socket ||
             (endpoint.port >= 1 && endpoint.port <= 65535));
  for (const auto& list : {endpoint.sentinels, endpoint.seeds}) {
    for (const auto& node : list) {
      FUZZ_CHECK(node.port >= 1 && node.port <= 65535);
      (void)endpoint.at(node).display();
    }
  }
  std::string display = endpoint.display();
  std::string key = redis::server_key(endpoint);
  redis::Endpoint handed_on;
  try {
    handed_on = redis::parse_url(bare);
  } catch (const UsageError&) {
    std::fprintf(stderr, "'%s' parses, without its password '%s' does not\n", std::string(url).c_str(), bare.c_str());
    std::abort();
  }
  FUZZ_CHECK(!handed_on.password || handed_on.password->empty());
  FUZZ_CHECK(redis::server_key(handed_on) == key);
  FUZZ_CHECK(handed_on.display() == display);
  return 0;
}
