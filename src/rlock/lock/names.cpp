#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/lock/names.hpp>

#include <fmt/format.h>

namespace rlock::lock {

namespace {

constexpr std::size_t k_max_name = 1024;
constexpr std::size_t k_max_token = 256;

} // namespace

std::string prefixed_name(std::string_view prefix, std::string_view name) {
  if (name.find('{') != std::string_view::npos) {
    return fmt::format("{}:{}", prefix, name);
  }
  return fmt::format("{}:{{{}}}", prefix, name);
}

LockKeys layout_keys(std::string_view name) {
  return LockKeys{std::string(name),
                prefixed_name("redisson_lock_token", name),
                prefixed_name("redisson_lock__channel", name),
                prefixed_name("redisson_unlock_latch", name),
                prefixed_name("rlock_acquire_latch", name),
                prefixed_name("redisson_lock_queue", name),
                prefixed_name("redisson_lock_timeout", name),
                prefixed_name("rlock_waiters", name),
                prefixed_name("redisson_rwlock", name),
                name.find('{') != std::string_view::npos ? std::string(name) : fmt::format("{{{}}}", name),
                suffixed_name(name, "timeout"),
                prefixed_name("redisson_sc", name),
                prefixed_name("rlock_permits", name),
                prefixed_name("rlock_write_intent", name),
                prefixed_name("rlock_done", name)};
}

LockKeys keys_for(std::string_view name) {
  if (name.empty()) {
    throw UsageError("lock name is empty");
  }
  if (name.size() > k_max_name) {
    throw UsageError(fmt::format("lock name is {} bytes long; the limit is {}", name.size(), k_max_name));
  }
  LockKeys keys = layout_keys(name);
  auto slot = hash_slot(keys.name);
  // An op id is hex, an owner token anything: every latch key, per-waiter
  // channel and reader lease key of the lock hashes like these samples.
  constexpr std::string_view k_sample_op = "0123456789abcdef";
  constexpr std::string_view k_sample_owner = "a}b{c}";
  bool same_slot = true;
  for (const auto* key : {&keys.fence_key, &keys.channel, &keys.queue, &keys.queue_timeouts, &keys.waiters,
                          &keys.rw_channel, &keys.reader_prefix, &keys.permit_timeouts, &keys.permit_channel,
                          &keys.permit_records, &keys.write_intent, &keys.done}) {
    same_slot = same_slot && hash_slot(*key) == slot;
  }
  same_slot = same_slot && hash_slot(fmt::format("{}:{}", keys.channel, k_sample_owner)) == slot &&
              hash_slot(fmt::format("{}:{}:rwlock_timeout:1", keys.reader_prefix, k_sample_owner)) == slot;
  if (!same_slot || hash_slot(latch_key(keys.unlock_latch, k_sample_op)) != slot ||
      hash_slot(latch_key(keys.acquire_latch, k_sample_op)) != slot) {
    throw UsageError(fmt::format(
        "lock name {} has braces that would put its fencing key in another cluster hash slot; "
        "use a complete {{tag}} or no braces",
        quote(name)));
  }
  return keys;
}

std::string suffixed_name(std::string_view name, std::string_view suffix) {
  if (name.find('{') != std::string_view::npos) {
    return fmt::format("{}:{}", name, suffix);
  }
  return fmt::format("{{{}}}:{}", name, suffix);
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
  case Mode::exclusive:
    return "exclusive";
  case Mode::fair:
    return "fair";
  case Mode::read:
    return "shared";
  case Mode::write:
    return "write";
  case Mode::limit:
    return "limit";
  }
  return "exclusive";
}

std::string latch_key(std::string_view prefix, std::string_view op_id) {
  return fmt::format("{}:{}", prefix, op_id);
}

bool is_reserved_field(std::string_view field) {
  return field.starts_with("rlock:") || field == "mode";
}

void check_owner_token(std::string_view token, std::string_view source) {
  if (token.empty() || token.size() > k_max_token) {
    throw UsageError(fmt::format("{}: an owner token is 1 to {} bytes; this one is {}", source, k_max_token,
                                 token.size()));
  }
  for (char ch : token) {
    if (ch < 0x20 || ch > 0x7e) {
      throw UsageError(
          fmt::format("{}: owner token {} has a byte that is not printable ASCII", source, quote(token)));
    }
  }
  if (is_reserved_field(token)) {
    throw UsageError(fmt::format("{}: owner token {} is reserved: it could be mistaken for a field of the "
                                 "lock's own record (rlock:meta, anything starting with rlock:, mode)",
                                 source, quote(token)));
  }
}

} // namespace rlock::lock
