// The guardian protocol's frames (src/guardian/guardian.h's pure decoders):
// the RLOCK_GUARDIAN value, rlock's go message and the guardian's reports. A
// frame decoded, encoded again, decodes to the same.

#include "fuzz.hpp"

#include <guardian/guardian.h>

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The variable's value: the input up to its first NUL.
  std::string value(rlock::fuzz::bytes(data, size));
  value = value.substr(0, value.find('\0'));
  guardian_state state{};
  if (guardian_state_decode(value.c_str(), &state)) {
    FUZZ_CHECK(state.role == guardian_role_guardian || state.role == guardian_role_orphaned);
    char out[256];
    std::size_t n = guardian_state_encode(&state, out, sizeof out);
    FUZZ_CHECK(n > 0);
    guardian_state again{};
    FUZZ_CHECK(guardian_state_decode(out, &again) == 1);
    FUZZ_CHECK(again.role == state.role && std::memcmp(again.field, state.field, sizeof state.field) == 0);
  }
  // Two 32-bit ints at a time: a go, then the same as a report.
  for (std::size_t at = 0; at + 8 <= size; at += 8) {
    std::int32_t frame[2];
    std::memcpy(frame, data + at, sizeof frame);
    guardian_go_message go{};
    if (guardian_go_decode(frame, &go)) {
      FUZZ_CHECK(go.env_size >= 0 && go.env_size <= guardian_go_max_env);
      std::int32_t again[2];
      guardian_go_encode(&go, again);
      FUZZ_CHECK(again[1] == frame[1] && (again[0] & 3) == (frame[0] & 3));
    }
    guardian_event event{};
    if (guardian_report_decode(frame, &event)) {
      std::int32_t again[2];
      guardian_report_encode(&event, again);
      FUZZ_CHECK(again[0] == frame[0] && again[1] == frame[1]);
    }
  }
  return 0;
}
