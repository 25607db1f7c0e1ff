#pragma once

#include <rlock/core/clock.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/redis/connection.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rlock::lock {

// What rlock records about a holder in the 'rlock:meta' field (the script adds
// acquired-at in server time, the lease and the fencing token).
struct HolderInfo {
  std::string host;
  long long pid = 0;
  std::string command;
};

// Who holds a lock that we could not take.
struct Holder {
  std::string owner; // owner token ("" for a foreign key)
  std::string type;  // "hash" for a lock, else the foreign key's type
  Millis ttl{0};     // remaining lease; negative: -1 no expiry, -2 gone meanwhile
  std::string meta;  // raw 'rlock:meta' JSON, empty when the holder is not rlock
};

struct AcquireResult {
  bool acquired = false;
  bool reentered = false;
  long long count = 0; // reentry count after this acquisition
  long long fence = 0; // fencing token of the current hold
  Millis lease{0};
  TimePoint sent_at;  // when the request that answered was sent (lease start bound)
  Holder holder; // when !acquired
};

// One attempt to take or re-enter the lock. `op_id` identifies this logical
// request: a retry with the same id after a lost reply is not counted twice.
AcquireResult try_acquire(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                          Millis lease, const std::string& op_id, const HolderInfo& info);

enum class OwnerCheck {
  ok,        // done
  missing,   // no such lock
  other,     // held by another owner (holder in `other_owner`)
  foreign,   // a key of another type: never touched
};

struct ReleaseResult {
  OwnerCheck check = OwnerCheck::ok;
  long long remaining = 0; // levels still held by the owner (0: the lock is free)
  std::string detail;      // other owner token, or the foreign key's type
};

// Undoes one level (or all) of `owner`'s hold; never touches another owner's lock.
ReleaseResult release(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                      bool all, const std::string& op_id);

struct RenewResult {
  OwnerCheck check = OwnerCheck::ok;
  Millis lease{0};
  std::string detail;
};

// Sets the lease of a lock `owner` holds to `lease` (0: the lease it was taken
// with). Never re-creates a lock that has gone.
RenewResult renew(redis::Connection& conn, const LockKeys& keys, const std::string& owner,
                  Millis lease);

// Deletes the lock whoever holds it. Returns the removed key's type, or nothing.
std::optional<std::string> force_unlock(redis::Connection& conn, const LockKeys& keys);

struct LockState {
  std::string name;
  std::string type; // "none" when free
  Millis ttl{0};    // PTTL: -1 no expiry
  std::vector<std::pair<std::string, long long>> owners; // token, count
  std::string meta;                                      // raw JSON or empty
  bool held() const { return type != "none"; }
};

// Reads the state of several locks at once, changing nothing.
std::vector<LockState> inspect(redis::Connection& conn, const std::vector<std::string>& names);

// Names of lock-shaped hashes (owner fields with integer counts, or an
// 'rlock:meta' field) whose names match a glob pattern; SCAN, bounded.
std::vector<std::string> find_locks(redis::Connection& conn, const std::string& pattern);

// A fresh random operation id for try_acquire/release.
std::string new_op_id();

} // namespace rlock::lock
