// CLUSTER NODES (redis/slots cluster_view): a node's own view of the cluster,
// text from the server. The first byte says whether the node asked has an
// address of its own (an empty host in the view becomes it).

#include "fuzz.hpp"

#include <rlock/redis/slots.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  std::string_view own_host = data[0] & 1 ? "127.0.0.1" : "";
  std::string_view rest = fuzz::bytes(data + 1, size - 1);
  // As the bulk string a server sends, and as any reply the bytes make.
  redis::Reply text;
  text.type = redis::Reply::Type::string;
  text.str = std::string(rest);
  auto view = redis::cluster_view(text, own_host);
  if (view) {
    FUZZ_CHECK(view->primary || view->replicas.empty());
    for (const auto& node : view->replicas) {
      FUZZ_CHECK(node.port >= 0 && node.port <= 65535);
    }
  }
  (void)redis::cluster_view(fuzz::reply_of(rest), own_host);
  return 0;
}
