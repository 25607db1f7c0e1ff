// force-unlock --if-dead: judge the recorded holder, then remove the lock only
// if it is still the hold that was judged.

#include <rlock/lock/if_dead.hpp>

namespace rlock::lock {

IfDeadResult force_unlock_if_dead(Store& store, const LockKeys& keys, const LockState& before, const ThisHost& here,
                                  const ProcessProbe& probe) {
  IfDeadResult result;
  if (!before.held()) {
    return result;
  }
  result.verdict = judge_holder(before, here, probe);
  if (!result.verdict.gone) {
    result.outcome = IfDeadOutcome::not_proven;
    return result;
  }
  switch (store.force_unlock_if(keys, {before.owners.front().first, before.record_raw, result.verdict.why})) {
  case ConditionalRemoval::removed:
    result.outcome = IfDeadOutcome::removed;
    break;
  case ConditionalRemoval::gone:
    result.outcome = IfDeadOutcome::released_meanwhile;
    break;
  case ConditionalRemoval::changed:
    result.outcome = IfDeadOutcome::changed_hands;
    break;
  }
  return result;
}

} // namespace rlock::lock
