#pragma once

// The requests of the mode layouts other than the exclusive RLock (mode.hpp).
//
// lock.hpp's try_acquire / release / renew call these by the request's mode;
// nothing else does. Each follows the exclusive lock's rules: a resend answers
// as the first send did (own token found = acquired; a latch otherwise), no
// request ever changes another owner's hold, reserved tokens are refused by
// the scripts themselves, every fresh acquisition takes a fencing token from
// redisson_lock_token:{NAME}, and rlock's holder record is written beside the
// hold and removed with it.

#include <rlock/lock/lock.hpp>

namespace rlock::lock {

// lock.cpp -- the plain RLock's waiters queued for their turn (lua/lib/turns.lua):
// a waiter that gives up (deadline, signal, error) leaves at once. Never
// throws (a waiter that cannot leave is dropped once its time passes, or when
// a release finds nobody listening on its channel).
void turn_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept;

// fair.cpp -- RFairLock. `join_queue`: a busy attempt puts the owner at the end
// of the queue (or keeps its place and pushes its give-up time forward); false
// for a single attempt (-n), which leaves the queue untouched. A busy answer
// sets AcquireResult::retry_after (the waiter must attempt again within it to
// keep its place).
AcquireResult fair_try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                               const redis::RetryScope& scope, bool join_queue);
// A waiter that gives up (deadline, signal, error) leaves the queue at once.
// Never throws (a waiter that cannot leave is dropped by its give-up time).
void fair_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept;

// rwlock.cpp -- RReadWriteLock; request.mode.mode is Mode::read or Mode::write.
AcquireResult rw_try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                             const redis::RetryScope& scope);
ReleaseResult rw_release(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                         const std::string& op_id, const std::string& only_if_acquired_by,
                         redis::RetryPolicy::Mode retry);
RenewResult rw_renew(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                     redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync);
// A writer that stops waiting (deadline, signal, error) withdraws what its
// busy attempts recorded to keep new readers from overtaking it. Never throws.
void rw_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept;

// permits.cpp -- RPermitExpirableSemaphore; request.mode.limit permits.
AcquireResult permit_try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                                 const redis::RetryScope& scope);
ReleaseResult permit_release(redis::Client& client, const LockKeys& keys, const std::string& owner, bool all,
                             const std::string& op_id, const std::string& only_if_acquired_by,
                             redis::RetryPolicy::Mode retry);
RenewResult permit_renew(redis::Client& client, const LockKeys& keys, const std::string& owner, Millis lease,
                         redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync);

} // namespace rlock::lock
