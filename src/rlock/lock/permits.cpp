// RPermitExpirableSemaphore layout (layouts.hpp): lua/permit_acquire.lua,
// permit_release.lua and permit_renew.lua, called as lock.cpp calls the
// exclusive lock's scripts.
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/layouts.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

namespace rlock::lock {

namespace {

using namespace detail;

// permit_acquire.lua's answer when NAME has another number of permits and some are held.
constexpr long long k_size_mismatch = -5;

} // namespace

AcquireResult permit_try_acquire(redis::Client& client, const AcquireRequest& request,
                                 const std::string& op_id, const redis::RetryScope& scope) {
  const TimePoint called = Clock::now(); // lease_start's bound
  const auto& keys = request.keys;
  std::vector<std::string> script_keys{keys.name,          keys.permit_timeouts, keys.permit_channel,
                                       keys.fence_key,     keys.permit_records,
                                       latch_key(keys.acquire_latch, op_id)};
  auto args = with_process({request.owner, ms(request.lease), request.own_token ? "1" : "0",
                            ms(scope.policy.latch_lifetime()), std::to_string(request.mode.limit),
                            client.publish_command(), request.info.host, std::to_string(request.info.pid),
                            request.info.command, RLOCK_VERSION},
                           request.info);
  args.emplace_back(redis::k_deadline_slot);
  with_history(script_keys, args, keys, acquisition_history(request));
  auto answer = run_script(client, scope, scripts::permit_acquire, script_keys, args, request.sync);
  const auto& reply = answer.reply;
  if (element(reply, 0).as_integer() == k_size_mismatch) {
    // The permits' number is the users' shared configuration, not a passing
    // state: waiting would not help, so this is refused at once.
    long long total = element(reply, 1).as_integer();
    long long held = element(reply, 2).as_integer();
    throw Error(
        Outcome::bad_setting,
        fmt::format("--limit {}: {} is a semaphore of {} permits, {} of them held; every user of a "
                    "name must give the same --limit (it is resized only while no permit is held)",
                    request.mode.limit, quote(keys.name), total, held));
  }
  AcquireResult result = decode_acquire(answer, called, request.lease);
  undo_if_unsynced(client, request, result, answer);
  if (!result.acquired && result.holder.layout == Layout::semaphore && result.holder.ttl.count() >= 0) {
    // Every permit is held: look again when the first of their leases ends (a
    // crashed holder's permit returns then, and nobody publishes it).
    result.retry_after = result.holder.ttl + Millis(1);
  }
  return result;
}

ReleaseResult permit_release(redis::Client& client, const LockKeys& keys, const std::string& owner, bool all,
                             const std::string& op_id, const std::string& only_if_acquired_by,
                             redis::RetryPolicy::Mode retry) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), true, std::nullopt, {}};
  const std::string publish = client.publish_command();
  std::vector<std::string> script_keys{keys.name, keys.permit_timeouts, keys.permit_channel,
                                       keys.permit_records, latch_key(keys.unlock_latch, op_id)};
  if (!only_if_acquired_by.empty()) {
    script_keys.push_back(latch_key(keys.acquire_latch, only_if_acquired_by));
  }
  std::vector<std::string> args{owner, all ? "1" : "0", publish, ms(scope.policy.latch_lifetime()), std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys, release_history(Mode::limit));
  auto reply = run_script(client, scope, scripts::permit_release, script_keys, args).reply;
  ReleaseResult result = decode_release(reply);
  if (result.check == OwnerCheck::ok && result.remaining == 0 && client.publish_command() != publish) {
    // The new count of free permits, as the script published it.
    publish_again_if_sharded(client, keys, publish, keys.permit_channel,
                             std::to_string(element(reply, 1).as_integer()));
  }
  return result;
}

RenewResult permit_renew(redis::Client& client, const LockKeys& keys, const std::string& owner, Millis lease,
                         redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), false, std::nullopt, {}};
  std::vector<std::string> script_keys{keys.name, keys.permit_timeouts, keys.permit_channel, keys.permit_records};
  std::vector<std::string> args{owner, ms(lease), client.publish_command(), std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys);
  return decode_renew(run_script(client, scope, scripts::permit_renew, script_keys, args, sync));
}

} // namespace rlock::lock
