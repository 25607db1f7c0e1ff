// RFairLock layout (layouts.hpp): lua/fair_acquire.lua and lua/fair_leave.lua;
// a fair hold is released, renewed and force-unlocked by the exclusive lock's
// scripts, which wake the queue's head rather than everyone.
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/layouts.hpp>

namespace rlock::lock {

namespace {

using namespace detail;

// A waiter's give-up time is the server's now + this, set at each of its
// attempts; a waiter that dies (SIGKILL) stops blocking the queue when it passes.
// With an attempt at least every k_refresh_every, a dead head is dropped by the
// next attempt of those behind it within 8s + 1s of its last attempt: inside the
// 10s the contract promises, whatever its -w. A live waiter has 7s of slack for
// an attempt that is slow to get through (one try is at most connect + 2 I/O
// timeouts, 6s with the defaults).
constexpr Millis k_give_up_window{8000};
constexpr Millis k_refresh_every{1000};

} // namespace

AcquireResult fair_try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                               const redis::RetryScope& scope, bool join_queue) {
  const TimePoint called = Clock::now(); // lease_start's bound
  const auto& keys = request.keys;
  auto args = with_process({request.owner, ms(request.lease), request.own_token ? "1" : "0",
                            ms(scope.policy.latch_lifetime()), request.info.host, std::to_string(request.info.pid),
                            request.info.command, RLOCK_VERSION, join_queue ? "1" : "0", ms(k_give_up_window)},
                           request.info);
  args.push_back(request.renews ? "1" : "0"); // a re-entry by run names it in the record, as acquire.lua
  args.emplace_back(redis::k_deadline_slot);
  std::vector<std::string> script_keys{keys.name,  keys.fence_key,      latch_key(keys.acquire_latch, op_id),
                                       keys.queue, keys.queue_timeouts, keys.waiters};
  with_history(script_keys, args, keys, acquisition_history(request));
  auto answer = run_script(client, scope, scripts::fair_acquire, script_keys, args, request.sync);
  AcquireResult result = decode_acquire(answer, called, request.lease);
  undo_if_unsynced(client, request, result, answer);
  if (!result.acquired && join_queue) {
    result.retry_after = k_refresh_every; // keeps the place: the give-up time moves on at each attempt
  }
  return result;
}

void fair_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept {
  try {
    run_script(client, one_shot(client, false), scripts::fair_leave,
               {keys.name, keys.queue, keys.queue_timeouts, keys.waiters, keys.channel},
               {owner, ms(k_give_up_window), client.publish_command(), std::string(redis::k_deadline_slot)});
  } catch (const std::exception& e) {
    // Its give-up time drops it within k_give_up_window anyway.
    log::debug("cannot leave the queue of {}: {}", quote(keys.name), e.what());
  }
}

} // namespace rlock::lock
