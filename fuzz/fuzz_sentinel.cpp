// Sentinel's answers (redis/client): SENTINEL GET-MASTER-ADDR-BY-NAME (the
// primary every request then goes to: sentinel_master) and SENTINEL SLAVES
// (the replicas a failover may promote: sentinel_replicas).

#include "fuzz.hpp"

#include <rlock/redis/client.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto replies = fuzz::replies_of(fuzz::bytes(data, size), 2);
  for (const auto& reply : replies) {
    auto primary = redis::sentinel_master(reply);
    if (primary) {
      FUZZ_CHECK(!primary->host.empty() && primary->host.size() <= 255 && primary->port >= 1 &&
                 primary->port <= 65535);
    }
    auto count = redis::sentinel_replicas(reply);
    FUZZ_CHECK(!count || (*count >= 0 && static_cast<std::size_t>(*count) <= reply.elements.size()));
  }
  return 0;
}
