#pragma once

// Modes (how a lock is taken), layouts (how it is held now) and key types,
// decoded once from what Redis answers.

#include <string>
#include <string_view>

namespace rlock::lock {

// How a lock is held (the MODE flags). Each mode uses its Redisson counterpart's
// layout, so Java services and rlock queue for and exclude each other:
//   exclusive  RLock: NAME is a hash {owner = count}, channel redisson_lock__channel:{NAME}
//   fair       RFairLock: the same hash, plus the queue redisson_lock_queue:{NAME}
//              (list of owners), their give-up times redisson_lock_timeout:{NAME}
//              (sorted set) and one channel per waiter (redisson_lock__channel:{NAME}:OWNER)
//   read       RReadWriteLock's read side: hash {mode = read, owner = count}, one lease
//              key per level ({NAME}:OWNER:rwlock_timeout:N), channel redisson_rwlock:{NAME}
//   write      its write side: hash {mode = write, OWNER:write = count}
//   limit      RPermitExpirableSemaphore: NAME is a string (free permits), the
//              sorted set {NAME}:timeout (permit id = owner -> lease end), channel redisson_sc:{NAME}
enum class Mode { exclusive, fair, read, write, limit };

struct ModeSpec {
  Mode mode = Mode::exclusive;
  long long limit = 0; // Mode::limit: the number of permits (--limit N), 1..10000

  bool operator==(const ModeSpec&) const = default;
};

// The layout a lock's keys are found in (how it is held now), decoded once
// from what Redis answers; cli/render turns it into words.
enum class Layout {
  none,      // free, or a key that is not a lock (a foreign key: LockState::type says its type)
  exclusive, // RLock hash
  fair,      // RLock hash with a queue (RFairLock)
  read,      // RReadWriteLock held for reading
  write,     // RReadWriteLock held for writing
  semaphore, // RPermitExpirableSemaphore
  other,     // a hash whose 'mode' field says neither read nor write (kept as read, for display)
};

// A key's type as Redis's TYPE names it (the scripts answer it as TYPE does),
// decoded once (key_type_of); cli/render turns it into words. A lock is a
// hash (RLock, RFairLock, RReadWriteLock) or, for a semaphore, a string
// (Layout says which lock it is); any other type is a foreign key, never
// touched. `other`: a type this list does not name (a module's).
enum class KeyType { none, string, list, set, zset, hash, stream, vectorset, other };

// The key type TYPE's answer `word` names ("" is none: a key that could not
// be read is shown as no key); anything unknown is other.
KeyType key_type_of(std::string_view word);

// TYPE's word for a key type ("hash", "none"...; "other" for other): Redis's
// own name, for the JSON output and messages.
std::string_view key_type_name(KeyType type);

// A mode's word, as the JSON output and the history's events say it:
// "exclusive", "fair", "shared", "write", "limit" (stored data, so here, not in render).
std::string_view mode_name(Mode mode);

// The layout a script or a hash's 'mode' field names: "exclusive", "fair",
// "read", "write", "semaphore"; "" is none; anything else other. The one
// decoder of layout words (scripts answer a layout, never a pseudo-type).
Layout layout_of(std::string_view word);

} // namespace rlock::lock
