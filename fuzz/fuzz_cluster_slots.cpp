// CLUSTER SLOTS (redis/slots slot_map): the map a Cluster client routes every
// request by. A map it accepts names a primary for a slot only by an index
// into its list of primaries, each a host of at most 255 bytes and a port.

#include "fuzz.hpp"

#include <rlock/redis/slots.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  redis::Reply reply = fuzz::reply_of(fuzz::bytes(data, size));
  auto map = redis::slot_map(reply, "127.0.0.1");
  if (map) {
    FUZZ_CHECK(map->slot_master.size() == static_cast<std::size_t>(redis::k_cluster_slots));
    for (auto index : map->slot_master) {
      FUZZ_CHECK(index >= -1 && (index < 0 || static_cast<std::size_t>(index) < map->masters.size()));
    }
    for (const auto& master : map->masters) {
      FUZZ_CHECK(!master.host.empty() && master.host.size() <= 255 && master.port >= 1 && master.port <= 65535);
    }
  }
  return 0;
}
