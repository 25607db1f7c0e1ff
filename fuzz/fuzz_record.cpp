// The holder record ('rlock:meta', written by anyone) and the once-per done
// record (rlock_done:{NAME}), as lock/record parses them: never a throw, and
// every value kept only in the range its header promises.

#include "fuzz.hpp"

#include <rlock/lock/record.hpp>

using namespace rlock;

namespace {

void check_string(const std::optional<std::string>& value) {
  FUZZ_CHECK(!value || value->size() <= 1024);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view raw = fuzz::bytes(data, size);
  lock::HolderRecord record = lock::parse_holder_record(raw);
  (void)record.readable();
  check_string(record.host);
  check_string(record.command);
  check_string(record.version);
  check_string(record.boot_id);
  FUZZ_CHECK(!record.pid || (*record.pid >= 1 && *record.pid <= 2147483647LL));
  FUZZ_CHECK(!record.ttl_ms || (*record.ttl_ms >= 1 && *record.ttl_ms <= 365LL * 24 * 3600 * 1000));
  FUZZ_CHECK(!record.fence || *record.fence >= 0);
  FUZZ_CHECK(!record.start_ticks || *record.start_ticks >= 0);

  lock::DoneRecord done = lock::parse_done_record(raw, size % 2 ? -1 : 1000);
  (void)done.readable();
  check_string(done.host);
  check_string(done.command);
  FUZZ_CHECK(!done.pid || (*done.pid >= 1 && *done.pid <= 2147483647LL));
  FUZZ_CHECK(!done.exit || (*done.exit >= 0 && *done.exit <= 255));
  FUZZ_CHECK(!done.window_start_ms || !done.window_end_ms || *done.window_end_ms > *done.window_start_ms);
  return 0;
}
