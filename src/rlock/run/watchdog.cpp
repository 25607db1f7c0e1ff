// The renewal thread: renews every TTL/3 on its own connection and keeps
// LeaseClock's proof of the lease; reports a loss through an eventfd.

#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/lease.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/run/watchdog.hpp>

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

namespace rlock::run {

LeaseClock::LeaseClock(Millis ttl, Millis kill_after, TimePoint first_sent)
    : m_ttl(ttl), m_margin(lock::lease_margin(ttl)), m_grace(std::min(kill_after, ttl / 4)),
      m_sent(first_sent) {}

void LeaseClock::confirmed(TimePoint sent, TimePoint now) {
  if (now >= kill_at()) {
    return;
  }
  m_sent = std::max(m_sent, sent);
}

Watchdog::Watchdog(std::unique_ptr<lock::Store> store, std::vector<lock::LockKeys> locks, lock::Mode mode,
                   std::string owner, Millis ttl, Millis kill_after, TimePoint acquired_sent, redis::SyncReplicas sync)
    : m_store(std::move(store)), m_sync(sync), m_locks(std::move(locks)), m_mode(mode), m_owner(std::move(owner)),
      m_ttl(ttl),
      m_clock(ttl, kill_after, acquired_sent), m_first_renewal(acquired_sent + m_clock.interval()) {
  m_state.stop_at = m_clock.stop_at();
  m_state.kill_at = m_clock.kill_at();
  m_event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

Watchdog::~Watchdog() {
  stop();
  if (m_event_fd >= 0) {
    ::close(m_event_fd);
  }
}

void Watchdog::start() {
  m_thread = std::thread([this] { loop(); });
}

void Watchdog::stop() noexcept {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

LeaseState Watchdog::state() {
  std::lock_guard lock(m_mutex);
  uint64_t drained = 0;
  ssize_t ignored = ::read(m_event_fd, &drained, sizeof drained);
  (void)ignored;
  return m_state;
}

void Watchdog::notify() {
  uint64_t one = 1;
  ssize_t ignored = ::write(m_event_fd, &one, sizeof one);
  (void)ignored;
}

void Watchdog::loop() {
  const Millis interval = m_clock.interval();
  TimePoint next = m_first_renewal;
  int failures = 0; // failed renewals in a row
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_cv.wait_until(lock, next, [&] { return m_stop; });
    if (m_stop) {
      return;
    }
    TimePoint sent = Clock::now();
    if (sent >= m_clock.kill_at()) {
      // Paused (SIGSTOP, a long swap-in) past what we can prove: the lock must
      // count as lost even if a renewal would still find it.
      m_state.lost = true;
      m_state.lost_reason = "the lease could have expired before it was renewed (rlock was paused)";
      notify();
      return;
    }
    lock.unlock();
    lock::RenewResult result;
    std::string error;
    bool unsynced = false;
    const lock::LockKeys* failed = &m_locks.front(); // the lock the error or loss is about
    try {
      m_store->refresh(); // Sentinel: renew where the sentinels now say the primary is
      for (const auto& keys : m_locks) {
        failed = &keys;
        result = m_store->renew(keys, m_mode, m_owner, m_ttl, redis::RetryPolicy::Mode::renewal, m_sync);
        if (result.check != lock::OwnerCheck::ok) {
          break;
        }
      }
    } catch (const RedisError& e) {
      error = e.what();
      unsynced = e.kind() == RedisErrorKind::unsynced;
    } catch (const std::exception& e) {
      error = e.what();
    }
    const std::string what = m_locks.size() > 1 ? quote(failed->name) + ": " : std::string();
    TimePoint now = Clock::now();
    lock.lock();
    if (m_stop) {
      return;
    }
    if (!error.empty()) {
      // Keep trying, faster than the interval, until the supervisor's
      // deadline; it decides when the lease can no longer be trusted.
      // The error reaches the supervisor (last_error) only once its warning
      // is written: a loss line that names it comes after the warning.
      bool first = m_state.last_error.empty();
      next = now + redis::RetryPolicy::renewal_backoff(++failures, interval);
      if (first) {
        lock.unlock(); // never write to stderr while holding what the supervisor reads
        if (unsynced) {
          log::warning("no replica confirmed the renewal of {} on {}: {}; retrying", quote(failed->name),
                       m_store->describe(), error);
        } else {
          log::warning("cannot renew {} on {}: {}; retrying", quote(failed->name), m_store->describe(), error);
        }
        lock.lock();
        if (m_stop) {
          return;
        }
      }
      m_state.last_error = error;
      m_state.last_unsynced = unsynced;
      if (first) {
        notify(); // a loss the supervisor holds back for this warning can be said now
      }
      continue;
    }
    if (result.check != lock::OwnerCheck::ok) {
      m_state.lost = true;
      m_state.lost_reason = what + (result.check == lock::OwnerCheck::missing
                                        ? "the lock is gone (expired, force-unlocked or the server lost it)"
                                    : result.check == lock::OwnerCheck::other
                                        ? "the lock is now held by another owner"
                                        : "the key is no longer a lock");
      notify();
      return;
    }
    bool recovered = !m_state.last_error.empty();
    m_state.last_error.clear();
    m_state.last_unsynced = false;
    failures = 0;
    m_clock.confirmed(sent, now);
    m_state.stop_at = m_clock.stop_at();
    m_state.kill_at = m_clock.kill_at();
    next = sent + interval;
    if (recovered) {
      lock.unlock();
      log::info("renewing {} again", quote(m_locks.front().name));
      lock.lock();
      if (m_stop) {
        return;
      }
    }
  }
}

} // namespace rlock::run
