#pragma once

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

// "exclusive", "fair", "shared", "write", "limit"
std::string_view mode_name(Mode mode);

} // namespace rlock::lock
