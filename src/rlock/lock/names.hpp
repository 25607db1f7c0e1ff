#pragma once

// A lock name's keys in every layout (Redisson's rules), and the checks of
// names and owner tokens.

#include <rlock/redis/slots.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace rlock::lock {

using redis::hash_slot;

// Redisson's prefixName rule: "PREFIX:{NAME}", or "PREFIX:NAME" when NAME
// already holds a '{'.
std::string prefixed_name(std::string_view prefix, std::string_view name);

// The keys of one lock: the hash itself, Redisson's fencing counter and release
// channel, and the prefixes of the latch keys that make a resent request answer
// what the first one did (see latch_key). All share the lock's hash slot
// (checked by keys_for).
struct LockKeys {
  std::string name;
  std::string fence_key;     // redisson_lock_token:{NAME}
  std::string channel;       // redisson_lock__channel:{NAME}
  std::string unlock_latch;  // redisson_unlock_latch:{NAME} (Redisson's unlock latch)
  std::string acquire_latch; // rlock_acquire_latch:{NAME}
  // Modes (see mode.hpp), all in NAME's slot too:
  std::string queue;           // redisson_lock_queue:{NAME}     fair: the waiters in order
  std::string queue_timeouts;  // redisson_lock_timeout:{NAME}   fair: each waiter's give-up time
  std::string waiters;         // rlock_waiters:{NAME}           fair: rlock's record of its waiters
  std::string rw_channel;      // redisson_rwlock:{NAME}         read/write release messages
  std::string reader_prefix;   // {NAME} (NAME when it has a '{'): reader lease keys PREFIX:OWNER:rwlock_timeout:N
  std::string permit_timeouts; // {NAME}:timeout                 limit: permit id -> lease end (ms)
  std::string permit_channel;  // redisson_sc:{NAME}             limit: release messages
  std::string permit_records;  // rlock_permits:{NAME}           limit: rlock's record of each permit holder
  std::string write_intent;    // rlock_write_intent:{NAME}      write: waiting writers (owner -> lapse time, ms)
  std::string done; // rlock_done:{NAME}              run --once-per: the last completion (once.hpp)
  std::string log;  // rlock_log:{NAME}               the lock's history, a capped stream (history.hpp)
  std::string turns; // rlock_turns:{NAME}            plain waiters waiting for their turn (lua/lib/turns.lua)
};

// Redisson's suffixName rule: "{NAME}:SUFFIX", or "NAME:SUFFIX" when NAME
// already holds a '{'.
std::string suffixed_name(std::string_view name, std::string_view suffix);

// Checks NAME (non-empty, at most 1024 bytes, companion keys in its hash slot) and
// returns its keys. Throws UsageError saying what is wrong.
LockKeys keys_for(std::string_view name);

// The keys of NAME by Redisson's naming rules, unchecked: for reading a key
// found by SCAN, whatever its name.
LockKeys layout_keys(std::string_view name);

// The latch key of one request: "PREFIX:OP" (Redisson's getUnlockLatchName shape).
// `op_id` is a new_op_id() (hex, no braces), so the key stays in PREFIX's slot.
std::string latch_key(std::string_view prefix, std::string_view op_id);

// True for a hash field that belongs to the lock's own record rather than to an
// owner: rlock's 'rlock:meta' (and anything else starting with 'rlock:') and the
// 'mode' field of Redisson's read-write locks.
bool is_reserved_field(std::string_view field);

// Checks an owner token given by the user: 1-256 printable ASCII bytes (0x20-0x7e)
// and not a reserved field name. `source` names where it came from ("--owner",
// "RLOCK_OWNER"). Throws UsageError saying why.
void check_owner_token(std::string_view token, std::string_view source);

} // namespace rlock::lock
