// Durations (core/duration parse_duration: --ttl, -w, --kill-after, every
// DUR of the command line and the environment): a value in range or a
// UsageError; and format_duration of it.

#include "fuzz.hpp"

#include <rlock/core/duration.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  bool allow_zero = data[0] & 1;
  std::string_view text = fuzz::bytes(data + 1, size - 1);
  Millis value;
  try {
    value = parse_duration(text, "--ttl", allow_zero);
  } catch (const UsageError&) {
    return 0;
  }
  constexpr long long k_year_ms = 365LL * 24 * 3600 * 1000;
  FUZZ_CHECK(value.count() >= (allow_zero ? 0 : 1) && value.count() <= k_year_ms);
  FUZZ_CHECK(!format_duration(value).empty());
  return 0;
}
