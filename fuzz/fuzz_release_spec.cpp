// The release spec (run/spawn decode_release_spec): what an orphaned rlock
// reads back from the guardian's sealed memfd to release the lock. Nothing
// unless the bytes are exactly what encode_release_spec writes: decoded bytes
// encode back to themselves.

#include "fuzz.hpp"

#include <rlock/run/spawn.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes = fuzz::bytes(data, size);
  auto spec = run::decode_release_spec(bytes);
  if (spec) {
    FUZZ_CHECK(run::encode_release_spec(spec->owner, spec->args, spec->env) == bytes);
  }
  return 0;
}
