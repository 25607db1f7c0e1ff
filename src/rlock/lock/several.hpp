#pragma once

// Several locks as one: all or none, in one order, released together.

#include <rlock/core/signals.hpp>
#include <rlock/lock/lease.hpp>
#include <rlock/lock/store.hpp>

#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::lock {

// Several locks held as one (`rlock acquire A B C`, `rlock run A B C -- CMD`):
// all or none, in one fixed order, so two commands naming the same locks in
// any order never deadlock (each waits only for a lock ordered after all it
// holds). The order is bytewise by name; on a Cluster, names in different
// hash slots are simply taken one after the other in that order.

// `request` is the template: its owner, mode, lease, record and wait; its
// keys are replaced by each of `locks` in turn.
struct Taken {
  bool acquired = false;            // every lock is held
  std::vector<AcquireResult> results; // in the order of `locks`; when !acquired, up to the busy one
  std::size_t busy = 0;             // when !acquired: index in `locks` of the lock that was busy
};

using NamedBusyCallback = std::function<void(const std::string& name, const Holder& holder, Millis wait_left)>;

// The order locks are taken in: indexes into `locks`, bytewise by name.
std::vector<std::size_t> take_order(const std::vector<LockKeys>& locks);

// How often acquire_all renews the locks it holds while it waits for the
// others: TTL/3, as the renewal thread of `run` (at least 10ms).
Millis keep_alive_every(Millis lease);

// Takes every lock, one by one in take_order, each waiting only until the one
// deadline request.wait sets for all of them. While one is awaited, those
// already taken are kept alive: renewed every TTL/3 (KeepAlive), each renewal
// confirming the lock is still ours (one Redis does not answer is tried again
// at the next interval: the waiter keeps trying until its deadline). Once the
// last one is taken, every one whose lease began too long before
// (lease_is_stale: an earlier one a wait came after, or one whose answer came
// late) is renewed once more, so every lease is full and every result's
// sent_at is the start of a lease confirmed now; one that then has no more
// than lease_margin left (lease_left_enough, issue 41) is not used: with -w
// time left, all are released and taken again, else RedisError(late), with
// nothing held. When one is busy at the deadline, or anything throws (a signal,
// Redis unreachable, a lock taken earlier found lost: Error(lost), 76), the
// locks taken so far are released (latest first) before it returns or rethrows.
Taken acquire_all(Store& store, const AcquireRequest& request, const std::vector<LockKeys>& locks,
                  SignalFd* signals, const NamedBusyCallback& on_busy);

// Releases every lock (latest taken first), each independently: one that fails
// or is not held does not stop the others. Results in the order of `locks`;
// a lock whose release threw has its exception in `errors` (same index).
// `retry`: as Store::release.
struct ReleasedAll {
  std::vector<ReleaseResult> results;
  std::vector<std::exception_ptr> errors; // null where the release was answered
};
ReleasedAll release_all(Store& store, const std::vector<LockKeys>& locks, Mode mode, const std::string& owner,
                        bool all, redis::RetryPolicy::Mode retry = redis::RetryPolicy::Mode::one_shot) noexcept;

// The one warning for a lock that could not be released: "LABEL: could not
// release "NAME" (it expires by its lease): why" (no "LABEL: " when empty).
void warn_not_released(std::string_view label, const std::string& name, const std::exception& why) noexcept;

// warn_not_released for each lock of `locks` whose release in `released`
// failed with an error (not an answer).
void warn_unreleased(std::string_view label, const std::vector<LockKeys>& locks,
                     const ReleasedAll& released) noexcept;

// `rlock renew A B C`: renews every lock in the order given, each
// independently (one that fails or is not `owner`'s does not stop the
// others), for `lease` (0: the lease it was taken with), each request by
// `retry`'s policy. Results in the order of `locks`; a lock whose renewal
// threw has its exception in `errors` (same index).
struct RenewedAll {
  std::vector<RenewResult> results;
  std::vector<std::exception_ptr> errors; // null where the renewal was answered
};
RenewedAll renew_all(Store& store, const std::vector<LockKeys>& locks, Mode mode, const std::string& owner,
                     Millis lease, redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) noexcept;

} // namespace rlock::lock
