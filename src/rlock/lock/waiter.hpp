#pragma once

#include <rlock/core/signals.hpp>
#include <rlock/lock/lock.hpp>

#include <functional>
#include <optional>

namespace rlock::lock {

// The waiter's decisions, as LeaseClock is for the renewal thread: a small pure
// class over the monotonic clock, unit-tested with made-up times. The caller
// does the I/O, tells the plan what happened and asks what to do next.
//
// The first attempt always runs. After a busy answer: without a wait, give up;
// with one, subscribe to the release channel, then attempt again (a release
// between the attempt and the subscription sent no message we could see), then
// wait for a release message or the holder's lease end (+1ms; 1s when the holder
// has no lease), whichever comes first, but never past the deadline; a wait that
// reaches the deadline makes one last attempt. A broken subscription is
// re-subscribed (then attempt again); a failed subscribe is tried again when the
// caller says (its RetryPolicy), once more at the deadline at the latest.
//
// Several names: while one is awaited, those the caller already holds must stay
// theirs. With keep_alive(due, every) the plan says `keep_alive` when `due`
// comes (before any other step but giving up), and again `every` after each
// renewal was sent; no wait lasts past it.
class WaitPlan {
public:
  enum class Step {
    attempt,   // send a new attempt (new op id)
    subscribe, // SUBSCRIBE to the release channel
    wait,      // wait until `until` for a release message (when subscribed) or a signal
    give_up,   // return the last busy answer
    keep_alive, // renew the locks the caller already holds (KeepAlive)
  };
  struct Next {
    Step step = Step::attempt;
    TimePoint until{}; // for Step::wait
  };

  // `wait`: nullopt for one attempt only (-n).
  WaitPlan(std::optional<Millis> wait, TimePoint start);

  TimePoint deadline() const { return m_deadline; }
  Next next(TimePoint now) const;

  // An attempt was answered: held by someone else for `holder_ttl` (negative:
  // no lease); `retry_after` > 0: attempt again within it whatever happens (a
  // fair waiter keeping its place, a permit whose lease ends then).
  void busy(Millis holder_ttl, TimePoint now, Millis retry_after = Millis(0));
  void subscribed();
  // The subscription broke: subscribe again.
  void subscription_lost();
  // SUBSCRIBE failed; try again at `retry_at`.
  void subscribe_failed(TimePoint retry_at);
  // A release message arrived: attempt now.
  void released();
  // Keep the caller's other locks alive: first at `due`, then `every` after each renewal.
  void keep_alive(TimePoint due, Millis every);
  // The renewal of the caller's other locks sent at `sent` was confirmed.
  void kept_alive(TimePoint sent);

private:
  std::optional<Millis> m_wait;
  TimePoint m_deadline;
  TimePoint m_answered_at = TimePoint::min(); // when the last attempt was answered busy
  bool m_attempt_due = true;                  // the next step is an attempt
  bool m_subscribed = false;
  bool m_subscribe_failed = false;
  TimePoint m_subscribe_at{}; // after a failed SUBSCRIBE
  TimePoint m_wake{};         // the holder's lease end after the last busy answer
  TimePoint m_keep_at = TimePoint::max(); // the caller's other locks are renewed then
  Millis m_keep_every{0};
};

// Called while waiting, after each busy attempt, with the holder and the time
// left until the wait's deadline (for the terminal display).
// Throws Interrupted for a pending signal that ends a wait (SIGINT, SIGTERM...);
// others in the set (SIGCHLD, SIGCONT) are the caller's business and dropped.
void throw_if_interrupted(SignalFd& signals);

using BusyCallback = std::function<void(const Holder& holder, Millis wait_left)>;

// The locks a waiter's caller already holds (several names are taken one by
// one), kept alive while it waits: `renew` renews every one of them and
// confirms each is still the caller's; it throws when one is not (or on an
// error waiting cannot mend), which ends the wait. Called first at `due`, then
// `every` after each call began (WaitPlan::keep_alive). Empty: nothing held.
struct KeepAlive {
  TimePoint due = TimePoint::max();
  Millis every{0};
  std::function<void()> renew;
  explicit operator bool() const { return static_cast<bool>(renew); }
};

// The channel a waiter for `request` listens on: the lock's release channel
// (redisson_lock__channel:{NAME}), a fair waiter's own
// (redisson_lock__channel:{NAME}:OWNER), the read-write lock's
// (redisson_rwlock:{NAME}) or the semaphore's (redisson_sc:{NAME}).
std::string wait_channel(const AcquireRequest& request);

// Takes the lock, waiting up to request.wait without polling, as WaitPlan
// decides: on a second connection, to the node serving the lock (SSUBSCRIBE on
// a Redis 7+ Cluster, as Redisson), it subscribes to the release channel and tries
// again on each release message, or when the holder's lease runs out. Each
// attempt has its own op id; only an attempt that got no answer is sent again
// (same op id, by the one RetryPolicy: once without a wait, until the deadline
// with one). Returns the last attempt's result (acquired or busy at the
// deadline). Throws Interrupted when a signal arrives on `signals` while
// waiting, and RedisError when Redis cannot be reached (a timeout, closed or io
// kind: the last attempt may still be applied). While it waits, `keep_alive`
// keeps the caller's other locks alive when the plan says.
AcquireResult acquire(redis::Client& client, const AcquireRequest& request, SignalFd* signals,
                      const BusyCallback& on_busy, const KeepAlive& keep_alive);

} // namespace rlock::lock
