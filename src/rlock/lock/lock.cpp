#include <rlock/core/text.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

#include <sys/random.h>

#include <algorithm>

namespace rlock::lock {

namespace {

constexpr std::string_view k_meta_field = "rlock:meta";

std::string ms(Millis value) {
  return std::to_string(value.count());
}

// One script request, resent as `scope` allows (every resend carries the same
// KEYS and ARGV, so the same op id).
redis::Reply run_script(redis::Connection& conn, const redis::RetryScope& scope, const redis::Script& script,
                        const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  return redis::send_with_retries(scope, [&] { return redis::eval(conn, script, keys, args); });
}

const redis::Reply& element(const redis::Reply& reply, std::size_t i) {
  if (!reply.is_array() || reply.elements.size() <= i) {
    throw RedisError(RedisErrorKind::protocol, fmt::format("unexpected script reply {}", reply.summary()));
  }
  return reply.elements[i];
}

std::string optional_string(const redis::Reply& reply, std::size_t i) {
  if (!reply.is_array() || reply.elements.size() <= i || reply.elements[i].is_nil()) {
    return {};
  }
  return reply.elements[i].as_string();
}

// Decodes the {-1}, {-2, holder}, {-3, type} answers shared by release and renew.
OwnerCheck owner_check(long long code) {
  switch (code) {
  case -1:
    return OwnerCheck::missing;
  case -2:
    return OwnerCheck::other;
  case -3:
    return OwnerCheck::foreign;
  default:
    return OwnerCheck::ok;
  }
}

// A hash value read as a reentry count; 0 when it is not one.
long long count_of(const redis::Reply& value) {
  try {
    return value.as_integer();
  } catch (const RedisError&) {
    return 0;
  }
}

// inspect.lua answers for at most this many keys per call, and at most 64 KiB
// per hash, so no reply is larger than about 5 MiB.
constexpr std::size_t k_inspect_batch = 64;

std::vector<LockState> inspect_batch(redis::Connection& conn, const std::vector<std::string>& names) {
  auto reply = run_script(conn, one_shot(conn, false), scripts::inspect, names, {});
  std::vector<LockState> states;
  states.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& entry = element(reply, i);
    LockState state;
    state.name = names[i];
    state.type = element(entry, 0).as_string();
    state.ttl = Millis(element(entry, 1).as_integer());
    state.complete = element(entry, 3).as_integer() == 1;
    const auto& fields = element(entry, 2);
    for (std::size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
      const auto& field = fields.elements[f].as_string();
      const auto& value = fields.elements[f + 1];
      if (field == k_meta_field) {
        state.record = parse_holder_record(value.is_nil() ? "" : value.as_string());
      } else if (!is_reserved_field(field)) {
        state.owners.emplace_back(field, count_of(value));
      }
    }
    states.push_back(std::move(state));
  }
  return states;
}

// A hash that looks like a lock: owner fields with positive counts, and a lease
// (Redisson always sets one) or rlock's record; a counter hash without expiry is not.
bool lock_shaped(const LockState& state) {
  if (state.type != "hash" || !state.complete || (state.owners.empty() && !state.record)) {
    return false;
  }
  if (state.ttl.count() < 0 && !state.record) {
    return false;
  }
  return std::all_of(state.owners.begin(), state.owners.end(),
                     [](const auto& owner) { return owner.second > 0; });
}

} // namespace

std::string new_op_id() {
  unsigned long long value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return fmt::format("{:016x}", value);
}

redis::RetryScope one_shot(const redis::Connection& conn, bool latched) {
  return {redis::RetryPolicy(conn.timeouts(), redis::RetryPolicy::Mode::one_shot), latched, std::nullopt, {}};
}

AcquireResult try_acquire(redis::Connection& conn, const AcquireRequest& request, const std::string& op_id,
                          const redis::RetryScope& scope) {
  // A resend only makes the true send time later, so this bound stays on the safe side.
  TimePoint sent_at = Clock::now();
  const auto& keys = request.keys;
  auto reply = run_script(
      conn, scope, scripts::acquire, {keys.name, keys.fence_key, latch_key(keys.acquire_latch, op_id)},
      {request.owner, ms(request.lease), request.own_token ? "1" : "0", ms(scope.policy.latch_lifetime()),
       request.info.host, std::to_string(request.info.pid), request.info.command, RLOCK_VERSION});
  AcquireResult result;
  result.sent_at = sent_at;
  long long code = element(reply, 0).as_integer();
  if (code == 1 || code == 2) {
    result.acquired = true;
    result.reentered = code == 2;
    result.count = element(reply, 1).as_integer();
    result.fence = element(reply, 2).as_integer();
    result.lease = Millis(element(reply, 3).as_integer());
    return result;
  }
  result.holder.owner = optional_string(reply, 1);
  result.holder.ttl = Millis(element(reply, 2).as_integer());
  result.holder.type = optional_string(reply, 3);
  if (reply.elements.size() > 4 && !reply.elements[4].is_nil()) {
    result.holder.record = parse_holder_record(reply.elements[4].as_string());
  }
  return result;
}

ReleaseResult release(redis::Connection& conn, const LockKeys& keys, const std::string& owner, bool all,
                      const std::string& op_id) {
  auto scope = one_shot(conn, true);
  auto reply = run_script(conn, scope, scripts::release,
                          {keys.name, keys.channel, latch_key(keys.unlock_latch, op_id)},
                          {owner, all ? "1" : "0", "PUBLISH", ms(scope.policy.latch_lifetime())});
  long long code = element(reply, 0).as_integer();
  ReleaseResult result;
  result.check = owner_check(code);
  if (result.check == OwnerCheck::ok) {
    result.remaining = code;
  } else {
    result.detail = optional_string(reply, 1);
  }
  return result;
}

RenewResult renew(redis::Connection& conn, const LockKeys& keys, const std::string& owner, Millis lease,
                  redis::RetryPolicy::Mode mode) {
  redis::RetryScope scope{redis::RetryPolicy(conn.timeouts(), mode), false, std::nullopt, {}};
  auto reply = run_script(conn, scope, scripts::renew, {keys.name}, {owner, ms(lease)});
  long long code = element(reply, 0).as_integer();
  RenewResult result;
  result.check = owner_check(code);
  if (result.check == OwnerCheck::ok) {
    result.lease = Millis(element(reply, 1).as_integer());
  } else {
    result.detail = optional_string(reply, 1);
  }
  return result;
}

std::optional<std::string> force_unlock(redis::Connection& conn, const LockKeys& keys) {
  auto scope = one_shot(conn, true);
  auto reply = run_script(conn, scope, scripts::force_unlock,
                          {keys.name, keys.channel, latch_key(keys.unlock_latch, new_op_id())},
                          {"PUBLISH", ms(scope.policy.latch_lifetime())});
  if (element(reply, 0).as_integer() == 0) {
    return std::nullopt;
  }
  return optional_string(reply, 1);
}

std::vector<LockState> inspect(redis::Connection& conn, const std::vector<std::string>& names) {
  std::vector<LockState> states;
  for (std::size_t start = 0; start < names.size(); start += k_inspect_batch) {
    auto end = std::min(names.size(), start + k_inspect_batch);
    std::vector<std::string> batch(names.begin() + static_cast<long>(start),
                                   names.begin() + static_cast<long>(end));
    auto part = inspect_batch(conn, batch);
    std::move(part.begin(), part.end(), std::back_inserter(states));
  }
  return states;
}

std::vector<LockState> find_locks(redis::Connection& conn, const std::string& pattern) {
  // SCAN ends when the cursor comes back to 0, after roughly (keys / COUNT)
  // rounds; this bound (a billion keys' worth) only stops a server that never
  // ends a scan, and says so.
  constexpr long k_max_rounds = 1'000'000;
  std::vector<std::string> candidates;
  std::string cursor = "0";
  long round = 0;
  do {
    if (++round > k_max_rounds) {
      throw RedisError(RedisErrorKind::protocol,
                       fmt::format("SCAN did not end after {} rounds ({} hashes seen); listing stopped",
                                   k_max_rounds, candidates.size()));
    }
    auto reply = redis::send_with_retries(one_shot(conn, false), [&] {
      return conn.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", "hash"});
    });
    cursor = element(reply, 0).as_string();
    for (const auto& key : element(reply, 1).elements) {
      candidates.push_back(key.as_string());
    }
  } while (cursor != "0");
  // SCAN may return a key more than once (a rehash during the scan).
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<LockState> locks;
  for (auto& state : inspect(conn, candidates)) {
    if (lock_shaped(state)) {
      locks.push_back(std::move(state));
    }
  }
  return locks;
}

} // namespace rlock::lock
