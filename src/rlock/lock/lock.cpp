#include <rlock/redis/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

#include <sys/random.h>

#include <algorithm>

namespace rlock::lock {

namespace {

constexpr std::string_view k_meta_field = "rlock:meta";

// Every lock script is idempotent (acquire and release through their op id), so
// a request whose connection broke mid-way is sent once more on a new connection.
redis::Reply run_script(redis::Connection& conn, const redis::Script& script,
                        const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  try {
    return redis::eval(conn, script, keys, args);
  } catch (const RedisError& e) {
    if (e.kind() != RedisErrorKind::closed && e.kind() != RedisErrorKind::io) {
      throw;
    }
  }
  return redis::eval(conn, script, keys, args);
}

std::string ms(Millis value) {
  return std::to_string(value.count());
}

const redis::Reply& element(const redis::Reply& reply, std::size_t i) {
  if (!reply.is_array() || reply.elements.size() <= i) {
    throw RedisError(RedisErrorKind::protocol,
                     fmt::format("unexpected script reply {}", reply.summary()));
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

} // namespace

std::string new_op_id() {
  unsigned long long value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return fmt::format("{:016x}", value);
}

AcquireResult try_acquire(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                          Millis lease, const std::string& op_id, const HolderInfo& info) {
  // A retry inside run_script only makes the true send time later, so this
  // bound stays on the safe side.
  TimePoint sent_at = Clock::now();
  auto reply = run_script(conn, scripts::acquire, {keys.name, keys.fence_key},
                          {owner, ms(lease), op_id, info.host, std::to_string(info.pid),
                           info.command, RLOCK_VERSION});
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
  result.holder.meta = optional_string(reply, 4);
  return result;
}

ReleaseResult release(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                      bool all, const std::string& op_id) {
  auto reply = run_script(conn, scripts::release, {keys.name, keys.channel},
                          {owner, all ? "1" : "0", op_id, "PUBLISH"});
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

RenewResult renew(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                  Millis lease) {
  auto reply = run_script(conn, scripts::renew, {keys.name}, {owner, ms(lease)});
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
  auto reply = run_script(conn, scripts::force_unlock, {keys.name, keys.channel}, {"PUBLISH"});
  if (element(reply, 0).as_integer() == 0) {
    return std::nullopt;
  }
  return optional_string(reply, 1);
}

std::vector<LockState> inspect(redis::Connection& conn, const std::vector<std::string>& names) {
  std::vector<LockState> states;
  if (names.empty()) {
    return states;
  }
  auto reply = run_script(conn, scripts::inspect, names, {});
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& entry = element(reply, i);
    LockState state;
    state.name = names[i];
    state.type = element(entry, 0).as_string();
    state.ttl = Millis(element(entry, 1).as_integer());
    const auto& fields = element(entry, 2);
    for (std::size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
      const auto& field = fields.elements[f].as_string();
      const auto& value = fields.elements[f + 1].as_string();
      if (field == k_meta_field) {
        state.meta = value;
      } else {
        long long count = 0;
        try {
          count = fields.elements[f + 1].as_integer();
        } catch (const RedisError&) {
          count = 0; // not a count: shown as 0
        }
        state.owners.emplace_back(field, count);
      }
    }
    states.push_back(std::move(state));
  }
  return states;
}

std::vector<std::string> find_locks(redis::Connection& conn, const std::string& pattern) {
  constexpr int k_max_rounds = 10'000;
  constexpr std::size_t k_max_locks = 10'000;
  std::vector<std::string> candidates;
  std::string cursor = "0";
  for (int round = 0; round < k_max_rounds; ++round) {
    auto reply = conn.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", "hash"});
    cursor = element(reply, 0).as_string();
    for (const auto& key : element(reply, 1).elements) {
      candidates.push_back(key.as_string());
    }
    if (cursor == "0" || candidates.size() >= k_max_locks) {
      break;
    }
  }
  std::vector<std::string> locks;
  // Keep hashes shaped like locks: every field an integer count except rlock:meta.
  constexpr std::size_t k_batch = 200;
  for (std::size_t start = 0; start < candidates.size(); start += k_batch) {
    std::vector<std::string> batch(candidates.begin() + static_cast<long>(start),
                                   candidates.begin() + static_cast<long>(std::min(candidates.size(), start + k_batch)));
    for (const auto& state : inspect(conn, batch)) {
      if (state.type != "hash" || (state.owners.empty() && state.meta.empty())) {
        continue;
      }
      // A lock has a lease (Redisson always sets one) or rlock's record; a
      // counter hash without expiry is not a lock.
      bool counts = state.ttl.count() >= 0 || !state.meta.empty();
      for (const auto& [owner, count] : state.owners) {
        counts = counts && count > 0;
      }
      if (counts) {
        locks.push_back(state.name);
      }
    }
  }
  std::sort(locks.begin(), locks.end());
  return locks;
}

} // namespace rlock::lock
