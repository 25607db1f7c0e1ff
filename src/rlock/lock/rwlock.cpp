// RReadWriteLock layout (layouts.hpp): the read side (-s/--shared) and the
// write side (--write), with rlock's writer preference. The scripts' headers
// (lua/rw_*.lua) hold the layout and every answer.
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/layouts.hpp>

namespace rlock::lock {

namespace {

using namespace detail;

// A waiting writer's intent keeps new readers out for this long after its
// latest attempt; the waiter attempts again within k_intent_refresh, so a
// writer that dies stops holding readers up after at most k_intent_life.
constexpr Millis k_intent_life{5'000};
constexpr Millis k_intent_refresh{1'000};

std::string_view side_of(Mode mode) {
  return mode == Mode::write ? "write" : "read";
}

} // namespace

AcquireResult rw_try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                             const redis::RetryScope& scope) {
  const TimePoint called = Clock::now(); // lease_start's bound
  const auto& keys = request.keys;
  const bool writer = request.mode.mode == Mode::write;
  // Only a writer that will wait records an intent (a single attempt, -n, leaves none).
  const bool join = writer && request.wait.has_value();
  std::vector<std::string> script_keys{keys.name, keys.fence_key, latch_key(keys.acquire_latch, op_id),
                                       keys.write_intent};
  auto args = with_process({request.owner, ms(request.lease), request.own_token ? "1" : "0",
                            ms(scope.policy.latch_lifetime()), request.info.host, std::to_string(request.info.pid),
                            request.info.command, RLOCK_VERSION, std::string(side_of(request.mode.mode)),
                            join ? "1" : "0", ms(k_intent_life), keys.reader_prefix},
                           request.info);
  args.emplace_back(redis::k_deadline_slot);
  with_history(script_keys, args, keys, acquisition_history(request));
  auto answer = run_script(client, scope, scripts::rw_acquire, script_keys, args, request.sync);
  AcquireResult result = decode_acquire(answer, called, request.lease);
  undo_if_unsynced(client, request, result, answer);
  const auto& reply = answer.reply;
  if (result.acquired) {
    return result;
  }
  if (join) {
    result.retry_after = k_intent_refresh; // keep the intent alive
  } else if (reply.elements.size() > 6 && reply.elements[6].type == redis::Reply::Type::integer) {
    result.retry_after = Millis(reply.elements[6].as_integer()); // a reader kept out by a writer's intent
    result.holder.writer_waiting = !writer && result.retry_after.count() > 0;
  }
  return result;
}

ReleaseResult rw_release(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner,
                         bool all, const std::string& op_id, const std::string& only_if_acquired_by,
                         redis::RetryPolicy::Mode retry) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), true, std::nullopt, {}};
  const std::string publish = client.publish_command();
  std::vector<std::string> script_keys{keys.name, keys.rw_channel, latch_key(keys.unlock_latch, op_id)};
  if (!only_if_acquired_by.empty()) {
    script_keys.push_back(latch_key(keys.acquire_latch, only_if_acquired_by));
  }
  std::vector<std::string> args{owner, all ? "1" : "0", publish, ms(scope.policy.latch_lifetime()),
                                std::string(side_of(mode)), keys.reader_prefix, std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys, release_history(mode));
  auto reply = run_script(client, scope, scripts::rw_release, script_keys, args).reply;
  ReleaseResult result = decode_release(reply);
  if (result.check == OwnerCheck::ok && result.remaining == 0) {
    // Whether the script published (a reader leaving others in it does not)
    // is not in its answer: a message too many only wakes waiters that try again.
    publish_again_if_sharded(client, keys, publish, keys.rw_channel, mode == Mode::write ? "1" : "0");
  }
  return result;
}

RenewResult rw_renew(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner,
                     Millis lease, redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), false, std::nullopt, {}};
  std::vector<std::string> script_keys{keys.name};
  std::vector<std::string> args{owner, ms(lease), std::string(side_of(mode)), keys.reader_prefix, std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys);
  return decode_renew(run_script(client, scope, scripts::rw_renew, script_keys, args, sync));
}

void rw_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept {
  try {
    run_script(client, one_shot(client, false), scripts::rw_leave, {keys.write_intent, keys.rw_channel},
               {owner, client.publish_command(), std::string(redis::k_deadline_slot)});
  } catch (const std::exception& e) {
    // Its intent lapses by itself within k_intent_life.
    log::debug("cannot withdraw the write intent on {}: {}", quote(keys.name), e.what());
  }
}

} // namespace rlock::lock
