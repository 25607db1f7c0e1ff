// run --once-per: its windows on the server's clock, the done record's
// verdict, and recording a completion.

#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/once.hpp>
#include <rlock/redis/errors.hpp>

#include <fmt/format.h>

namespace rlock::lock {

Window window_of(long long now_ms, long long length_ms) {
  // Floor division: an instant before the epoch belongs to the window that
  // starts at or before it, as one after it does.
  long long start = now_ms / length_ms * length_ms;
  if (start > now_ms) {
    start -= length_ms;
  }
  return {start, start + length_ms};
}

OnceVerdict judge_once(const std::optional<DoneRecord>& record, long long now_ms, long long length_ms) {
  // No key, or a key without an expiry: rlock always sets one, so it is not
  // rlock's record, readable or not, and the next completion overwrites it.
  if (!record || record->ttl_ms == -1) {
    return OnceVerdict::not_done;
  }
  if (!record->readable()) {
    return record->ttl_ms >= 0 ? OnceVerdict::unreadable : OnceVerdict::not_done;
  }
  auto window = window_of(now_ms, length_ms);
  return *record->done_at_ms >= window.start_ms && *record->done_at_ms < window.end_ms
             ? OnceVerdict::done
             : OnceVerdict::not_done;
}

DoneResult record_done(redis::Client& client, const LockKeys& keys, const std::string& owner, Millis length,
                       const HolderInfo& info, int exit_status) {
  using namespace detail;
  std::vector<std::string> script_keys{keys.name, keys.done};
  std::vector<std::string> args{owner, ms(length), info.host, std::to_string(info.pid), info.command,
                                std::to_string(exit_status), RLOCK_VERSION, new_op_id(),
                                // sent this long before its deadline (redis/script.hpp): CMstd::string(redis::k_deadline_slot) ended by then
                                ms(client.timeouts().io + Millis(1)), std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys);
  auto reply = run_script(client, one_shot(client, true), scripts::once_done, script_keys, args).reply;
  DoneResult result;
  long long code = element(reply, 0).as_integer();
  if (code == 1) {
    result.window = {element(reply, 1).as_integer(), element(reply, 2).as_integer()};
    result.done_at_ms = element(reply, 3).as_integer();
    return result;
  }
  if (code < -4 || code > -1) {
    throw RedisError(RedisErrorKind::protocol, fmt::format("once_done.lua answered {}", code));
  }
  result.check = owner_check(code);
  result.detail = optional_string(reply, 1);
  return result;
}

} // namespace rlock::lock
