// Each script's answer (lua/*.lua) through its decoder (lock/detail.hpp): the
// acquire, release and renew answers every layout shares, the busy answer's
// holder, and inspect.lua's entry (then lock_shaped, what SCAN lists). The
// first byte picks the decoder and the replica acknowledgements; the rest is
// the RESP the server sent. A decoder may refuse an answer only with a
// RedisError.

#include "fuzz.hpp"

#include <rlock/core/clock.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/client.hpp>

using namespace rlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  int which = data[0] % 6;
  redis::EvalReply answer;
  answer.reply = fuzz::reply_of(fuzz::bytes(data + 2, size - 2));
  // WAIT's part: none (-1), or some of one or two asked, automatic or not.
  answer.acked = static_cast<long long>(data[1] % 4) - 1;
  answer.required = redis::SyncReplicas{data[1] & 0x10 ? 2 : 1, Millis(100), (data[1] & 0x20) != 0};
  answer.node = data[1] & 0x40 ? "10.0.0.1:7000" : "";
  try {
    switch (which) {
    case 0: {
      const TimePoint called = Clock::now();
      lock::AcquireResult result = lock::detail::decode_acquire(answer, called, Millis(1 + 37 * (data[1] & 0x0f)));
      FUZZ_CHECK(result.acquired || !result.reentered);
      break;
    }
    case 1:
      (void)lock::detail::decode_release(answer.reply);
      break;
    case 2:
      (void)lock::detail::decode_renew(answer);
      break;
    case 3:
      (void)lock::detail::decode_holder(answer.reply);
      break;
    case 4: {
      lock::LockState state = lock::detail::decode_inspected("fuzz", answer.reply);
      FUZZ_CHECK(state.name == "fuzz");
      (void)lock::lock_shaped(state);
      (void)state.held();
      for (const auto& [owner, count] : state.owners) {
        (void)lock::redisson_owner_shaped(owner);
      }
      break;
    }
    case 5:
      if (answer.acked >= 0) {
        (void)lock::detail::unsynced_phrase(answer);
      }
      break;
    }
  } catch (const RedisError&) {
  }
  return 0;
}
