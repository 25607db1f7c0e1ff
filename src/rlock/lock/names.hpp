#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rlock::lock {

// Redis Cluster hash slot of a key (CRC16/XMODEM mod 16384, honouring {hash tags}).
std::uint16_t hash_slot(std::string_view key);

// Redisson's prefixName rule: "PREFIX:{NAME}", or "PREFIX:NAME" when NAME
// already holds a '{'.
std::string prefixed_name(std::string_view prefix, std::string_view name);

// The keys of one lock: the hash itself, Redisson's fencing counter and release
// channel. All three share the lock's hash slot (checked by validate_name).
struct LockKeys {
  std::string name;
  std::string fence_key; // redisson_lock_token:{NAME}
  std::string channel;   // redisson_lock__channel:{NAME}
};

// Checks NAME (non-empty, at most 1024 bytes, companion keys in its hash slot) and
// returns its keys. Throws UsageError saying what is wrong.
LockKeys keys_for(std::string_view name);

} // namespace rlock::lock
