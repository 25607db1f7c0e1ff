#pragma once

// lock::Store, what commands and `run` talk to: one deployment or a Redlock
// quorum, the same typed results from both.

#include <rlock/core/signals.hpp>
#include <rlock/lock/doctor.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/lock/once.hpp>
#include <rlock/lock/waiter.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlock::lock {

// Where locks live, as the commands and `run` see it: one deployment (a
// standalone server, a Cluster or a Sentinel primary: one redis::Client), or a
// Redlock quorum over several independent masters. Both give the same typed
// results; the quorum adds each node's view.
class Store {
public:
  virtual ~Store() = default;

  // The same store for another thread (the renewal thread): no connections,
  // what this one learnt of the topology; with `cap`, no connect or I/O
  // timeout longer than it.
  virtual std::unique_ptr<Store> fresh(std::optional<Millis> cap) const = 0;

  // Takes the lock, waiting as request.wait says (interruptible by `signals`),
  // keeping the caller's other locks alive meanwhile (`keep_alive`, when given).
  virtual AcquireResult acquire(const AcquireRequest& request, SignalFd* signals, const BusyCallback& on_busy,
                                const KeepAlive& keep_alive) = 0;
  // `retry`: one_shot (one resend of an unanswered request) or once (run's
  // release after its lease was lost).
  virtual ReleaseResult release(const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                                redis::RetryPolicy::Mode retry) = 0;
  // Throws RedisError when the renewal cannot be confirmed (not lost, not done).
  virtual RenewResult renew(const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                            redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) = 0;
  // lock::leave_queue, on every server the waiter may be queued on: a run
  // killed while it waited (its guardian's hand-over). Never throws.
  virtual void leave_queue(const LockKeys& keys, Mode mode, const std::string& owner) noexcept = 0;
  virtual std::optional<KeyType> force_unlock(const LockKeys& keys) = 0;
  // lock::force_unlock_if; a Redlock quorum throws Error(bad_setting) (a holder record
  // is per master: there is no one hold to compare).
  virtual ConditionalRemoval force_unlock_if(const LockKeys& keys, const ExpectedHold& expected) = 0;
  // lock::record_done (run --once-per); a Redlock quorum throws Error(bad_setting)
  // (the CLI refuses --once-per with several URLs before that).
  virtual DoneResult record_done(const LockKeys& keys, const std::string& owner, Millis length,
                                 const HolderInfo& info, int exit_status) = 0;
  virtual std::vector<LockState> inspect(const std::vector<std::string>& names) = 0;
  // `history`: the newest `limit` events of the lock (history.hpp; a Redlock
  // quorum: those a majority of masters hold, merge_majority).
  virtual History history(const LockKeys& keys, int limit) = 0;
  // An event only the client knows (lost, skipped): once, best effort, never
  // throws (a Redlock quorum: to every master). See log_client_event.
  virtual void log_event(const LockKeys& keys, const std::string& kind, const std::string& owner,
                         const EventFields& extras) = 0;
  virtual std::vector<LockState> find_locks(const std::string& pattern) = 0;
  // `doctor`: the facts of every server locks live on (each primary; each
  // Redlock master, an unreachable one with `unreachable` set). Throws
  // RedisError when a single deployment cannot be reached.
  virtual std::vector<ServerFacts> survey() = 0;
  // Follows a failover the old primary has not noticed (Sentinel); see Client::refresh.
  virtual void refresh() = 0;
  // For messages: the URL(s), never a password.
  virtual std::string describe() const = 0;
  // How the servers asked so far name themselves (status --json's "servers";
  // every Redlock master's). Never asks.
  virtual std::vector<redis::Client::ServerName> server_names() const = 0;
};

// The store for `urls` (already parsed into endpoints): one deployment, or a
// Redlock quorum when there are several. Throws Error(bad_setting) when two of several
// resolve to a common address (the same server named twice: one vote counted
// twice); nothing is connected yet.
std::unique_ptr<Store> make_store(const std::vector<redis::Endpoint>& endpoints, redis::Timeouts timeouts);

} // namespace rlock::lock
