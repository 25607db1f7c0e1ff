// A name's keys in every layout (Redisson's naming rules, hash slots, latch
// keys), the names refused, owner tokens refused, and the decoders of words.

#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/lock/names.hpp>

#include <fmt/format.h>

#include <array>
#include <optional>

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
                prefixed_name("rlock_done", name),
                prefixed_name("rlock_log", name),
                prefixed_name("rlock_turns", name)};
}

namespace {

// The prefixes of the helper keys rlock and Redisson keep beside a lock
// (prefixed_name's PREFIX:{NAME} or PREFIX:NAME): a lock by such a name would
// be another lock's helper key.
constexpr std::array<std::string_view, 11> k_helper_prefixes{
    "redisson_lock_token:", "redisson_unlock_latch:", "redisson_lock_queue:", "redisson_lock_timeout:",
    "rlock_acquire_latch:", "rlock_waiters:",         "rlock_permits:",       "rlock_write_intent:",
    "rlock_done:",          "rlock_log:",             "rlock_turns:"};

LockKeys checked_keys(std::string_view name);

// The name rlock also accepts whose helper keys NAME's would be, if any: "{X}"
// shares every prefixed and suffixed key with "X" (Redisson's rule leaves a name
// with a '{' as it is and puts one without in braces), when "X" has no '{' and
// is a name rlock accepts. Nothing else collides: a name without '{' maps to
// PREFIX:{NAME}, one with a '{' to PREFIX:NAME, so two names meet only there.
std::optional<std::string> braced_twin(std::string_view name) {
  if (name.size() < 3 || name.front() != '{' || name.back() != '}') {
    return std::nullopt;
  }
  auto inner = name.substr(1, name.size() - 2);
  if (inner.find('{') != std::string_view::npos) {
    return std::nullopt;
  }
  try {
    checked_keys(inner);
  } catch (const UsageError&) {
    return std::nullopt; // "X" itself is refused: nobody else has these keys
  }
  return std::string(inner);
}

// Whether NAME has the form of a helper key of another lock: a prefixed one,
// a semaphore's permit set ("{X}:timeout", "X:timeout" where X has a '{') or a
// reader's lease key ("...:rwlock_timeout:..." with a '{').
// Returns the form, as the message shows it.
std::optional<std::string> helper_form(std::string_view name) {
  for (auto prefix : k_helper_prefixes) {
    if (name.starts_with(prefix)) {
      return fmt::format("{}...", prefix);
    }
  }
  if (name.find('{') != std::string_view::npos) {
    if (name.ends_with(":timeout")) {
      return "...:timeout, a semaphore's permits";
    }
    if (name.find(":rwlock_timeout:") != std::string_view::npos) {
      return "...:rwlock_timeout:..., a reader's lease";
    }
  }
  return std::nullopt;
}

LockKeys checked_keys(std::string_view name) {
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
                          &keys.permit_records, &keys.write_intent, &keys.done, &keys.log, &keys.turns}) {
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

} // namespace

LockKeys keys_for(std::string_view name) {
  LockKeys keys = checked_keys(name);
  if (auto twin = braced_twin(name)) {
    throw UsageError(fmt::format(
        "lock name {} is refused: Redisson gives {} and {} the same helper keys (redisson_lock_queue:{}, "
        "{}:timeout, redisson_lock_token:{}, ...), so the two locks would share their queue, permits and "
        "records; use {} or a name with more outside the braces, such as {} (the same cluster hash slot)",
        quote(name), quote(name), quote(*twin), name, name, name, quote(*twin), quote(fmt::format("{}:lock", name))));
  }
  if (auto form = helper_form(name)) {
    throw UsageError(fmt::format("lock name {} is refused: it has the form of a helper key rlock or Redisson "
                                 "keeps beside another lock ({}), which a lock by that name would take over",
                                 quote(name), *form));
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

Layout layout_of(std::string_view word) {
  constexpr std::pair<std::string_view, Layout> k_words[] = {{"", Layout::none},
                                                             {"exclusive", Layout::exclusive},
                                                             {"fair", Layout::fair},
                                                             {"read", Layout::read},
                                                             {"write", Layout::write},
                                                             {"semaphore", Layout::semaphore}};
  for (const auto& [known, layout] : k_words) {
    if (word == known) {
      return layout;
    }
  }
  return Layout::other;
}

namespace {

constexpr std::pair<std::string_view, KeyType> k_key_types[] = {
    {"none", KeyType::none}, {"string", KeyType::string}, {"list", KeyType::list},
    {"set", KeyType::set},   {"zset", KeyType::zset},     {"hash", KeyType::hash},
    {"stream", KeyType::stream}, {"vectorset", KeyType::vectorset}};

} // namespace

KeyType key_type_of(std::string_view word) {
  if (word.empty()) {
    return KeyType::none;
  }
  for (const auto& [known, type] : k_key_types) {
    if (word == known) {
      return type;
    }
  }
  return KeyType::other;
}

std::string_view key_type_name(KeyType type) {
  for (const auto& [word, known] : k_key_types) {
    if (type == known) {
      return word;
    }
  }
  return "other";
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
