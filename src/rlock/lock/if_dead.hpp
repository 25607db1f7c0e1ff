#pragma once

// force-unlock --if-dead as one protocol step: judge, then remove only that hold.

#include <rlock/lock/liveness.hpp>
#include <rlock/lock/store.hpp>

namespace rlock::lock {

// What `force-unlock --if-dead` did.
enum class IfDeadOutcome {
  free,              // the lock was free: nothing to remove
  not_proven,        // its holder is not provably gone (verdict.why says why): nothing removed
  removed,           // its holder is gone and the lock was still that hold: removed
  released_meanwhile, // its holder is gone, but the lock was released before the removal
  changed_hands,     // its holder is gone, but the lock changed hands before the removal: nothing removed
};

struct IfDeadResult {
  IfDeadOutcome outcome = IfDeadOutcome::free;
  HolderVerdict verdict; // judge_holder's (held locks only)
};

// force-unlock --if-dead on `keys`, as `before` (inspect, just now) shows it:
// judges the holder from its record (judge_holder, `here` and `probe`), then
// removes the lock only if it is still the hold that was judged (one script:
// Store::force_unlock_if). Throws what the store throws.
IfDeadResult force_unlock_if_dead(Store& store, const LockKeys& keys, const LockState& before, const ThisHost& here,
                                  const ProcessProbe& probe);

} // namespace rlock::lock
