#pragma once

// The renewal thread (Watchdog) and LeaseClock, the pure arithmetic of what
// the lease is proven to be.

#include <rlock/core/clock.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/lock/store.hpp>

#include <memory>
#include <vector>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace rlock::run {

// The lease as rlock can prove it, on the monotonic clock. A renewal confirmed
// for a request sent at S means the server's lease runs at least until S + ttl;
// with nothing newer confirmed, the child must be stopping by
// stop_at() = S + ttl - margin - grace and dead by kill_at() = S + ttl - margin.
// Pure arithmetic: unit-tested with made-up times.
class LeaseClock {
public:
  LeaseClock(Millis ttl, Millis kill_after, TimePoint first_sent);

  // A renewal sent at `sent` was confirmed. Ignored once kill_at() has passed
  // at `now` (the lock is then considered lost whatever the server says).
  void confirmed(TimePoint sent, TimePoint now);
  TimePoint stop_at() const { return m_sent + m_ttl - m_margin - m_grace; }
  TimePoint kill_at() const { return m_sent + m_ttl - m_margin; }
  TimePoint last_sent() const { return m_sent; }
  Millis interval() const { return m_ttl / 3; }
  Millis margin() const { return m_margin; }
  Millis grace() const { return m_grace; }

private:
  Millis m_ttl;
  Millis m_margin; // clock-rate differences and the reply's trip back
  Millis m_grace;  // time between SIGTERM and SIGKILL for an unconfirmed lease
  TimePoint m_sent;
};

// What the watchdog knows, read by the supervisor under the watchdog's mutex.
struct LeaseState {
  TimePoint stop_at;
  TimePoint kill_at;
  bool lost = false;       // a renewal found the lock gone or someone else's
  std::string lost_reason; // for the error line
  // The last failed renewal, set once the watchdog's warning about it is
  // written: the supervisor holds back an unconfirmed lease's loss line until
  // then (Stopping::turn), so the warning that explains it comes first.
  std::string last_error;
  // The last failed renewal was applied, but too few replicas acknowledged it
  // (RedisErrorKind::unsynced): the lock is on the primary, not on a replica.
  bool last_unsynced = false;
};

// Renews the lease every TTL/3 from its own thread, on its own connection (a
// redisContext is not thread-safe, and the main thread must never block on
// the network). Never throws across threads: loss and deadline changes are
// reported by writing to an eventfd the supervisor polls.
class Watchdog {
public:
  // `store`: the renewal thread's own (Store::fresh()). `sync`: renewals
  // fewer replicas acknowledged do not count as confirmed (--sync-replicas).
  // Every lock of `locks` is renewed each time (one after the other); a
  // renewal counts as confirmed when all were, and one found gone is a loss.
  Watchdog(std::unique_ptr<lock::Store> store, std::vector<lock::LockKeys> locks, lock::Mode mode, std::string owner,
           Millis ttl, Millis kill_after, TimePoint acquired_sent, redis::SyncReplicas sync = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the renewing thread. The supervisor starts it when the first
  // renewal is due, so a command that ends sooner costs no thread at all.
  void start();
  bool started() const { return m_thread.joinable(); }
  TimePoint first_renewal() const { return m_first_renewal; }
  // Stops renewing and joins the thread. Never throws.
  void stop() noexcept;
  // Readable when the state changed (loss found); read to clear.
  int event_fd() const { return m_event_fd; }
  LeaseState state();

private:
  void loop();
  void notify();

  std::unique_ptr<lock::Store> m_store;
  redis::SyncReplicas m_sync;
  std::vector<lock::LockKeys> m_locks;
  lock::Mode m_mode;
  std::string m_owner;
  Millis m_ttl;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
  LeaseClock m_clock;
  TimePoint m_first_renewal;
  LeaseState m_state;
  int m_event_fd = -1;
  std::thread m_thread;
};

} // namespace rlock::run
