#pragma once

// Waiting for a busy lock: WaitPlan's pure decisions and the loop that
// carries them out over subscriptions and the signalfd.

#include <rlock/core/signals.hpp>
#include <rlock/lock/lock.hpp>

#include <functional>
#include <optional>
#include <vector>

namespace rlock::lock {

// The waiter's decisions, as LeaseClock is for the renewal thread: a small pure
// class over the monotonic clock, unit-tested with made-up times. The caller
// does the I/O, tells the plan what happened and asks what to do next. One
// plan for one deployment (one subscription) and for a Redlock quorum (one
// subscription per master).
//
// The first attempt always runs. After a busy answer: without a wait, give up;
// with one, subscribe to the release channel (each subscription in turn), then
// attempt again (a release between the attempt and the subscription sent no
// message we could see), then wait for a release message or the holder's lease
// end (+1ms, plus the jitter the caller gives; 1s when the holder has no
// lease), whichever comes first, but never past the deadline; a wait that
// reaches the deadline makes one last attempt. A broken subscription is
// re-subscribed (then attempt again); a failed subscribe is tried again when the
// caller says (its RetryPolicy), once more at the deadline at the latest, or is
// not listened to at all (a quorum's master: best effort). An attempt that got
// no answer the caller can wait out (a round without a quorum) is made again
// when the caller says, never past the deadline.
//
// Several subscriptions (a quorum): a release goes to every master at once, so
// the others' messages follow within moments; an attempt started at the first
// one could find the lock still there on some masters. So a message means
// "attempt" once every subscription listened to has announced it, or
// `announce_wait` after the first did.
//
// A plain waiter on one deployment waits for its turn (lua/lib/turns.lua): an
// attempt that finds the lock held queues it (busy(..., queued)), and a
// release names one queued waiter on that waiter's own channel ('0': attempt
// at once), tells the next one ('next': attempt k_turn_grace later, in case
// the first died before taking the lock) and says '00' on the release
// channel. A queued waiter at the head of the queue (the first few; the
// others listen on their own channel only until told 'head': a release then
// wakes a handful of processes, not every waiter) hears the release channel
// too: '0' there (a release that named nobody, Redisson's unlock or
// forceUnlock, a release by a user without the turns' key) is a release; '00' gave the turn to another
// (passed_over): no attempt then, but the named waiter's turn has a deadline,
// k_turn_deadline (plus the caller's jitter) later, after which this waiter
// attempts, unless it heard first that the turn was taken (taken: a waiter
// that took the lock on its turn says so on the turns channel, see
// turns_channel). One script call a handover, not one per waiter, and however
// many named waiters are stopped or dead, a live one tries within a second. A
// waiter not queued takes every release message as one.
//
// Several names: while one is awaited, those the caller already holds must stay
// theirs. With keep_alive(due, every) the plan says `keep_alive` when `due`
// comes (before any other step but giving up), and again `every` after each
// renewal was sent; no wait lasts past it.
class WaitPlan {
public:
  enum class Step {
    attempt,   // send a new attempt (new op id)
    subscribe, // SUBSCRIBE to the release channel (subscription `index`)
    wait,      // wait until `until` for a release message (when subscribed) or a signal
    give_up,   // return the last busy answer (or throw the last attempt's error)
    keep_alive, // renew the locks the caller already holds (KeepAlive)
  };
  struct Next {
    Step step = Step::attempt;
    TimePoint until{};     // for Step::wait
    std::size_t index = 0; // for Step::subscribe
  };

  // `wait`: nullopt for one attempt only (-n). `subscriptions`: one per node
  // that announces releases.
  WaitPlan(std::optional<Millis> wait, TimePoint start, std::size_t subscriptions = 1,
           Millis announce_wait = Millis(0));

  TimePoint deadline() const { return m_deadline; }
  Next next(TimePoint now) const;

  // An attempt was answered: held by someone else for `holder_ttl` (negative:
  // no lease); `retry_after` > 0: attempt again within it whatever happens (a
  // fair waiter keeping its place, a permit whose lease ends then); `jitter`:
  // added to the wake-up at the holder's lease end (a quorum's waiters do not
  // all come at once).
  // `queued`: the attempt queued this waiter for its turn.
  void busy(Millis holder_ttl, TimePoint now, Millis retry_after = Millis(0), Millis jitter = Millis(0),
            bool queued = false);
  // Whether the last busy answer queued this waiter (its next attempt says so).
  bool queued() const { return m_queued; }
  // An attempt got no answer the caller waits out: attempt again at `retry_at`.
  void unanswered(TimePoint now, TimePoint retry_at);
  void subscribed(std::size_t index = 0);
  // The subscription broke (or the server ended it): subscribe again.
  void subscription_lost(std::size_t index = 0);
  // SUBSCRIBE failed; try again at `retry_at`.
  void subscribe_failed(TimePoint retry_at, std::size_t index = 0);
  // SUBSCRIBE failed and is not tried again: that node is not listened to.
  void not_listened(std::size_t index);
  // A release message arrived on subscription `index` at `now`.
  void released(std::size_t index = 0, TimePoint now = {});
  // A release named another waiter ('00'): a queued waiter attempts only
  // once that turn's deadline (k_turn_deadline + `jitter` after `now`) has
  // passed without its being taken; one that is not queued takes it as a
  // release message.
  void passed_over(std::size_t index, TimePoint now, Millis jitter = Millis(0));
  // This waiter is next ('next'): attempt k_turn_grace after `now` at the
  // latest, whether or not the turn is taken meanwhile: that attempt (the
  // handover's third script call at most) is how the waiter after the named
  // one learns the new holder's lease end, and says so; without it, a waiter
  // behind would sleep to a lease end long gone when the new holder exits
  // without releasing.
  void next_in_line(TimePoint now);
  // A waiter took the lock on its turn: no attempt for a turn's deadline
  // until the next release ('next' stands).
  void taken();
  // Keep the caller's other locks alive: first at `due`, then `every` after each renewal.
  void keep_alive(TimePoint due, Millis every);
  // The renewal of the caller's other locks sent at `sent` was confirmed.
  void kept_alive(TimePoint sent);

private:
  enum class Sub { none, subscribed, failed, not_listened };
  void answered(TimePoint now);

  std::optional<Millis> m_wait;
  TimePoint m_deadline;
  Millis m_announce_wait;
  TimePoint m_answered_at = TimePoint::min(); // when the last attempt was answered busy
  bool m_attempt_due = true;                  // the next step is an attempt
  bool m_fresh = false;                       // subscribed since the last attempt: attempt once all are
  std::vector<Sub> m_subs;
  std::vector<TimePoint> m_subscribe_at; // after a failed SUBSCRIBE
  std::vector<bool> m_announced;         // a release message came since the last attempt
  std::optional<TimePoint> m_first_message;
  TimePoint m_wake{};                     // the holder's lease end after the last busy answer
  TimePoint m_turn_at = TimePoint::max(); // a turn given to another ends untaken ('00')
  TimePoint m_next_at = TimePoint::max(); // this waiter is next ('next')
  TimePoint m_keep_at = TimePoint::max(); // the caller's other locks are renewed then
  Millis m_keep_every{0};
  bool m_queued = false; // the last busy answer queued this waiter for its turn
};

// How long after a release a waiter told it is next ('next') attempts, in
// case the waiter whose turn it is died before taking the lock: longer than
// a live waiter takes to take it, short beside a lease.
constexpr Millis k_turn_grace{200};
// How long after a release that named another ('00') any queued waiter may
// attempt, unless the turn was taken meanwhile (the named one and the one
// told 'next' were stopped, or died): after k_turn_grace, with the waiter's
// jitter (up to k_turn_jitter, so that the first to try takes it and says so
// before most others try) well within a second.
constexpr Millis k_turn_deadline{450};
constexpr Millis k_turn_jitter{250};

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

// The channels a waiter for `request` listens on: a plain waiter's, the
// lock's release channel (redisson_lock__channel:{NAME}), and when `own`
// (queued for its turn) its own (redisson_lock__channel:{NAME}:OWNER) and
// the turns channel, or with `behind` (queued behind the head of the queue,
// lua/lib/turns.lua) its own only, and no release channel of its mode; a fair waiter's own and the release channel (Redisson's
// unlock and forceUnlock say '0' there only); the read-write lock's
// (redisson_rwlock:{NAME}) or the semaphore's (redisson_sc:{NAME}). With
// `across`, also the release channels of the other layouts NAME may be held
// in (a plain hold is freed on the plain lock's channel, a read-write lock's
// on its own), so that a waiter of one mode wakes when a hold of another
// ends; the first channel is always the mode's own (a waiter behind the
// head: its own channel).
std::vector<std::string> wait_channels(const AcquireRequest& request, bool own, bool across = true,
                                       bool behind = false);

// The channel on which a plain waiter that took the lock on its turn says
// 'taken' (redisson_lock__channel:{NAME}:rlock:turns, under the release
// channel's ACL pattern; no owner token can name it: 'rlock:' is reserved):
// the other queued waiters then leave that turn's deadline alone.
std::string turns_channel(const LockKeys& keys);

// Whether waiting cannot end what keeps `request` out of the lock, so a
// waiter says so at once instead of waiting its -w out: a --limit
// semaphore's key (no lease, never freed by a release) met by another mode.
// Pure.
bool waiting_cannot_end(Mode mode, const Holder& holder);

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

// What the one waiter (below) waits on: one deployment, or a Redlock quorum.
struct WaitOn {
  // Where releases are announced: the one client, or each master. Its
  // timeouts and the RetryPolicy's waiter mode bound a subscription.
  std::vector<redis::Client*> nodes;
  // One attempt (a new op id), resent as the scope allows; throws RedisError.
  // `turn`: a plain waiter's place (set when `turns`).
  std::function<AcquireResult(const redis::RetryScope& scope, const std::optional<Turn>& turn)> attempt;
  // A Redlock quorum: SUBSCRIBE is sent to each master without awaiting its
  // confirmation, and a master that cannot be subscribed to is not listened
  // to; an attempt that fails with RedisError(quorum) is made again after
  // 50-250 ms (Redlock's retry) until the deadline; the wake-up at a holder's
  // lease end has 0-49 ms of jitter; a release message starts the next round
  // once every master listened to announced it, or 20 ms after the first.
  bool quorum = false;
  // Plain waiters on one deployment wait for their turn (lua/lib/turns.lua).
  bool turns = false;
};

// A waiter that gives up withdraws its place in `keys`'s queue as `mode`
// keeps one (a fair waiter, a writer's intent, a plain waiter's turn), at
// once, so it stops holding up those behind it. Never throws.
void leave_queue(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner) noexcept;

// The subscriptions of waits that ended with the lock taken are kept open
// until this is called (run calls it once CMD has its go: closing a socket
// costs a TCP reset, not on the way from "acquired" to CMD), or until the
// process exits.
void close_finished_waits() noexcept;

// The one waiter: takes the lock with `on.attempt`, waiting up to
// request.wait without polling as WaitPlan decides (subscribing on each of
// on.nodes to wait_channels(request, ...); a sharded subscription that the server
// ends because its slot moved, "sunsubscribe", is made again), calling
// `on_busy` for the terminal display and `keep_alive` when the plan says.
// Returns the last attempt's result (acquired or busy at the deadline); throws
// Interrupted for a signal on `signals`, and the RedisError of an attempt or a
// subscription that cannot be mended.
AcquireResult wait_for(const WaitOn& on, const AcquireRequest& request, SignalFd* signals,
                       const BusyCallback& on_busy, const KeepAlive& keep_alive);

} // namespace rlock::lock
