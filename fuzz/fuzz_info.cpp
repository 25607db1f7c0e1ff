// INFO replication (redis/connection replicas_of_info, redis/slots
// connected_replicas: doctor's list) and the HELLO reply
// (server_info_of_hello): what the handshake reads of a server. The first
// byte picks the decoder; the rest is the RESP reply (connected_replicas: the
// text itself).

#include "fuzz.hpp"

#include <rlock/redis/connection.hpp>
#include <rlock/redis/slots.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  std::string_view rest = fuzz::bytes(data + 1, size - 1);
  switch (data[0] % 3) {
  case 0: {
    auto count = redis::replicas_of_info(fuzz::reply_of(rest));
    FUZZ_CHECK(!count || (*count >= 0 && *count <= 999999));
    break;
  }
  case 1:
    for (const auto& replica : redis::connected_replicas(rest)) {
      FUZZ_CHECK(replica.node.port >= 0 && replica.node.port <= 65535);
    }
    break;
  case 2: {
    redis::ServerInfo info = redis::server_info_of_hello(fuzz::reply_of(rest));
    (void)info.major();
    break;
  }
  }
  return 0;
}
