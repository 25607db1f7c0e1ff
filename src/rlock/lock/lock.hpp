#pragma once

// The lock protocol's typed requests and results, one function per script
// (acquire, release, renew, force-unlock), and a lock's state as read.

#include <rlock/core/clock.hpp>
#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/lock/record.hpp>
#include <rlock/redis/client.hpp>
#include <rlock/redis/retry.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlock::lock {

// What rlock records about a holder in the 'rlock:meta' field (the script adds
// acquired-at in server time, the lease and the fencing token).
struct HolderInfo {
  std::string host;
  long long pid = 0;
  std::string command;
  std::string boot_id;                  // this host's boot ("": unknown)
  std::optional<long long> start_ticks; // pid's start time (/proc/PID/stat field 22)
};

// Who holds a lock that we could not take.
struct Holder {
  std::string owner; // owner token ("" for a foreign key, or when none could be read)
  KeyType type = KeyType::none; // hash for a lock, string for a semaphore, else a foreign key's type
  Millis ttl{0};     // remaining lease; negative: -1 no expiry, -2 gone meanwhile
  std::optional<HolderRecord> record; // nullopt: no 'rlock:meta' (not rlock's, e.g. Redisson)
  // The layout it is held in, as the script said it: read, write (read-write
  // lock), exclusive, semaphore; none: not said (the layout asked for). For a
  // --limit request, semaphore means every permit is taken (holder: the
  // permit whose lease ends first); for any other, a --limit semaphore.
  Layout layout = Layout::none;
  // Free, but it is this fair waiter's turn (owner: that waiter).
  bool queue_turn = false;
  // A reader kept out by a waiting writer's intent: the lock is free (then
  // owner is that writer, layout write, ttl its intent's time left) or held
  // by readers only (owner: one of them), and new readers wait behind it.
  bool writer_waiting = false;
};

struct AcquireRequest {
  LockKeys keys;
  ModeSpec mode; // how to hold it (mode.hpp); each mode has its own scripts
  std::string owner;
  Millis lease = k_default_lease;
  HolderInfo info;
  std::optional<Millis> wait; // nullopt: one attempt only (-n)
  // True when `owner` was made by this process (random_owner_token), so nobody
  // else can hold it: finding it in the hash means an earlier send of ours was
  // applied. False for a token given with --owner/RLOCK_OWNER (re-entry intended).
  bool own_token = false;
  // True when this process renews what it takes (run): a re-entry of a plain
  // lock makes its record name this process (force-unlock --if-dead then
  // judges the process that keeps the lock alive).
  bool renews = false;
  // --sync-replicas: WAIT after taking it; fewer acknowledgements undo the
  // acquisition (one level released) and throw RedisError(unsynced).
  redis::SyncReplicas sync;
};

// Whether an acquisition that failed with a RedisError of this kind failed
// because Redis could not be reached to take the lock ("unavailable"): the
// server(s) could not be connected to, a request got no whole reply in time
// or its connection broke, the server could not serve it (loading, a script
// running too long, a replica, a cluster in transition), too few replicas
// acknowledged it (--sync-replicas, which undoes it), or a Redlock found too
// few masters answering (no quorum). This, and never an exit code (busy may
// be remapped to any number with -E), is what `run --if-unavailable` acts
// on; a busy lock, an interrupted wait, a refused password and every other
// error are not unavailable (they are not RedisErrors of these kinds). Pure.
bool acquisition_unavailable(RedisErrorKind kind);

// Redlock: what one master answered to an acquisition.
struct NodeAnswer {
  enum class Kind { granted, busy, unreachable };
  std::string url;
  Kind kind = Kind::unreachable;
  std::string detail; // unreachable: why (at most k_node_detail_max bytes)
};
constexpr std::size_t k_node_detail_max = 287;

struct AcquireResult {
  bool acquired = false;
  bool reentered = false;
  long long count = 0; // reentry count after this acquisition
  long long fence = 0; // fencing token of the current hold
  Millis lease{0};
  TimePoint sent_at; // a lease of the length asked runs from here at least (lock::lease_start; Redlock: the round's start)
  Holder holder;     // when !acquired
  // When busy: attempt again within this long at the latest even without a
  // release message (0: no such bound). A fair waiter keeps its place in the
  // queue this way; a permit waiter wakes when the nearest permit lease ends.
  Millis retry_after{0};
  // When busy: this waiter is among those waiting for their turn
  // (rlock_turns:{NAME}, lua/lib/turns.lua): a release names it when its turn
  // comes, and a release that names another needs no attempt of it.
  bool queued = false;
  // Queued behind the waiters at the head (lua/lib/turns.lua): it listens on
  // its own channel only until a release tells it 'head'.
  bool behind = false;
  long long replicas_acked = -1; // with --sync-replicas: replicas that acknowledged it
  // Redlock: the remaining validity (TTL - elapsed - drift allowance), and what
  // each master answered.
  std::optional<Millis> validity;
  std::vector<NodeAnswer> node_answers;
};

// A plain waiter's attempt (lua/lib/turns.lua): held by another, the waiter
// waits for its turn `wait_left` more (the script then answers `queued`);
// `queued`: an earlier attempt of this wait queued it (taking the lock takes
// it out).
struct Turn {
  Millis wait_left{0};
  bool queued = false;
};

// One attempt to take or re-enter the lock, identified by `op_id`: a resend of
// it (after a lost reply, by `scope`'s policy) is applied once. With
// request.own_token the script answers "acquired" when it finds the token
// already there; otherwise the first application leaves a latch key
// (rlock_acquire_latch:{NAME}:OP, living scope.policy.latch_lifetime()) holding
// its answer, and a resend returns that answer unchanged. `turn`: a plain
// waiter's attempt (the exclusive mode only; others ignore it).
AcquireResult try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                          const redis::RetryScope& scope, const std::optional<Turn>& turn = std::nullopt);

// The scope of a one-shot command's request on `client`: one resend of an
// unanswered request, no waiting for an unreachable server.
redis::RetryScope one_shot(const redis::Client& client, bool latched);

enum class OwnerCheck {
  ok,      // done
  missing, // no such lock
  other,   // held by another owner (token in `detail`)
  foreign, // a key of another type: never touched (type says which)
  layout,  // held in another mode's layout (layout says which)
};

struct ReleaseResult {
  OwnerCheck check = OwnerCheck::ok;
  long long remaining = 0; // levels still held by the owner (0: the lock is free)
  std::string detail;      // check other: the other owner token; layout: the word said (Layout::other's)
  Layout layout = Layout::none; // check layout: the layout it is held in
  KeyType type = KeyType::none; // check foreign: the key's type
};

// Undoes one level (or all) of `owner`'s hold; never touches another owner's
// lock. Applied once per `op_id`: the first application leaves a latch key
// (redisson_unlock_latch:{NAME}:OP, as Redisson's unlock does) holding its
// answer, and a resend gets that answer unchanged, for any lock layout.
// `only_if_acquired_by`: the op id of an acquisition whose answer was lost;
// one level is released only if that acquisition was applied (its latch says
// so), else nothing changes and the answer is `missing`.
// `mode`: the layout the hold was taken in (exclusive and fair share one script).
// `retry`: one_shot, or once (one try, never resent).
ReleaseResult release(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                      const std::string& op_id, const std::string& only_if_acquired_by = {},
                      redis::RetryPolicy::Mode retry = redis::RetryPolicy::Mode::one_shot);

struct RenewResult {
  OwnerCheck check = OwnerCheck::ok;
  Millis lease{0};
  std::string detail;            // as ReleaseResult's
  Layout layout = Layout::none;  // check layout: the layout it is held in
  KeyType type = KeyType::none;  // check foreign: the key's type
  long long replicas_acked = -1; // with --sync-replicas
};

// Sets the lease of a lock `owner` holds to `lease` (0: the lease it was taken
// with, its record's ttl_ms if >= 1ms, at most 365d, else k_default_lease). Never
// re-creates a lock that has gone. Safe to send twice. `mode`: the layout it is
// held in; `retry`: the retry policy's mode (the renewal thread passes
// RetryPolicy::Mode::renewal: its own loop tries again). With
// sync.count > 0, a renewal that fewer replicas acknowledged throws
// RedisError(unsynced): it is not confirmed.
// A negative lease, kept_lease(L), sets the lease L for a hold kept to that
// end with no renewal after it (run --hold-min once CMD has ended): its record
// then says kept_until_ms, which status shows instead of a stopped heartbeat.
RenewResult renew(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                  redis::RetryPolicy::Mode retry = redis::RetryPolicy::Mode::one_shot,
                  const redis::SyncReplicas& sync = {});

// renew()'s lease for a hold kept `left` longer, to that end, with no renewal after it.
inline Millis kept_lease(Millis left) {
  return -std::max(Millis(1), left);
}

// Deletes the lock whoever holds it (once, with a latch like release). Returns
// the removed key's type, or nothing when there was nothing to remove.
std::optional<KeyType> force_unlock(redis::Client& client, const LockKeys& keys);

// The hold `force-unlock --if-dead` judged gone: its owner token and its raw
// 'rlock:meta' record as read.
struct ExpectedHold {
  std::string owner;
  std::string record_raw;
  std::string verdict; // why it was judged gone: the history's force-unlocked event says it
};

enum class ConditionalRemoval {
  removed, // it was still that hold: removed (waiters woken as force_unlock does)
  gone,    // there was nothing to remove
  changed, // it is another hold now (or its record changed): nothing changed
};

// force_unlock, only if the lock is still the hold `expected` describes (one
// script: checked and removed atomically).
ConditionalRemoval force_unlock_if(redis::Client& client, const LockKeys& keys, const ExpectedHold& expected);

struct LockState;

// Redlock: one master's view of a lock (state null when it did not answer).
struct NodeView {
  std::string url;
  std::shared_ptr<const LockState> state;
  std::string error;
};

// One holder of a shared layout: a reader of a read-write lock, or a permit of
// a semaphore, with its own lease.
struct HolderView {
  std::string owner;
  long long count = 1; // reentry levels (readers); 1 for a permit
  Millis ttl{0};       // its own lease left (-2: none left)
  std::optional<HolderRecord> record; // rlock's record of it, when there is one
};

// A waiter queued for a fair lock, in queue order. Only live ones: an entry
// whose give-up time has passed (a waiter that died, or gave up without
// leaving) is no waiter, and is not listed (issue 30).
struct WaiterView {
  std::string owner;
  // Its give-up time, from now: rlock's own (until_ms of its record, which
  // it refreshes while it lives), else the queue's score (Redisson's); none
  // when it has neither (never stale, as Redisson has it).
  std::optional<Millis> gives_up_in;
  std::optional<HolderRecord> record; // rlock's record of it (host, pid, command, since_ms)
  std::optional<Millis> waited;       // for how long (server clock), when its record says since when
};

struct LockState {
  std::string name;
  KeyType type = KeyType::none; // none when free
  Millis ttl{0};    // PTTL: -1 no expiry
  // exclusive (RLock), fair (RLock hash with a queue), read / write
  // (RReadWriteLock), semaphore (RPermitExpirableSemaphore); none for a foreign key or none
  Layout layout = Layout::none;
  std::string mode_field; // Layout::other: the hash's 'mode' field as read
  std::vector<std::pair<std::string, long long>> owners; // token, count (0: not a count)
  std::optional<HolderRecord> record;                    // nullopt: no 'rlock:meta'
  std::string record_raw;          // the 'rlock:meta' value as read (force-unlock --if-dead compares it)
  std::vector<HolderView> holders; // read-write lock: each reader; semaphore: each permit
  std::vector<WaiterView> waiters; // fair queue, in order
  std::optional<long long> permits_free; // semaphore: the free permits it counts, and those whose lease ended
  // (holders lists only the permits whose lease still runs)
  // The server's clock when it was read (ms since the epoch): "held for",
  // "renewed ago", the once-per window.
  std::optional<long long> server_now_ms;
  bool complete = true; // false: a hash too big to be a lock; its fields were not read
  // rlock_done:{NAME}, the last completion of `run --once-per` (nullopt: no
  // such key; a record with nothing readable: a key that is not one).
  std::optional<DoneRecord> last_done;
  std::vector<NodeView> nodes; // Redlock: each master's view (the fields above: the majority's)
  bool held() const { return layout == Layout::semaphore ? !holders.empty() : type != KeyType::none; }
};

// Reads the state of locks, changing nothing (in batches: bounded replies; on
// a Cluster, one batch per hash slot).
std::vector<LockState> inspect(redis::Client& client, const std::vector<std::string>& names);

// The state of every lock-shaped hash whose name matches a glob pattern, sorted
// by name (see lock_shaped). SCAN runs to its end (cursor 0) on every primary;
// throws RedisError when it does not end within a safety bound of rounds, never
// returns a short list.
std::vector<LockState> find_locks(redis::Client& client, const std::string& pattern);

// Whether a key found by SCAN is listed as a lock: a semaphore with permits
// out, or a hash whose owner fields all have positive integer counts and that
// has a lease or rlock's record, or, without either, whose owner fields all
// have Redisson's shape (UUID:thread, a writer's UUID:thread:write): a
// Redisson lock held without an expiry is the very lock `check --ttl-none`
// looks for; a counter hash without expiry is no lock. Pure.
bool lock_shaped(const LockState& state);

// Whether an owner field has the shape Redisson (and rlock's own tokens)
// give: a UUID, ':' and a number (a thread id, a pid), and for a read-write
// lock's writer ':write' after it. Pure.
bool redisson_owner_shaped(std::string_view field);

// A fresh random operation id (16 hex digits) for try_acquire/release.
std::string new_op_id();

} // namespace rlock::lock
