// history_read.lua's answer (lock/history decode_history: the stream's
// entries, written by anyone who may XADD), then a Redlock's majority merge of
// it with itself. Malformed entries are kept as malformed, never a crash.

#include "fuzz.hpp"

#include <rlock/lock/history.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  redis::Reply reply = fuzz::reply_of(fuzz::bytes(data, size));
  try {
    lock::History history = lock::decode_history(reply);
    for (const auto& event : history.events) {
      FUZZ_CHECK(event.fields.size() <= 64);
      (void)event.get("owner");
    }
    lock::History merged = lock::merge_majority({history, history}, 2, 100);
    FUZZ_CHECK(merged.events.size() <= 100);
  } catch (const RedisError&) {
  }
  return 0;
}
