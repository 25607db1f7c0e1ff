#pragma once

// `rlock run` once the locks are held: RunSpec and supervise().

#include <rlock/core/defaults.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/lock/waiter.hpp>
#include <rlock/lock/store.hpp>
#include <rlock/run/policy.hpp>
#include <rlock/run/spawn.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rlock::run {

struct RunSpec {
  lock::AcquireRequest request;     // owner, mode, lease... (its keys: the first lock's)
  std::vector<lock::LockKeys> locks; // every NAME, in the order given (taken all or none)
  std::vector<std::string> child_argv;
  // Set in CMD's environment besides RLOCK_NAME, RLOCK_OWNER and RLOCK_FENCE:
  // RLOCK_URL (never with a password) and, when given, RLOCK_PASSWORD_FILE.
  std::vector<std::pair<std::string, std::string>> child_env;
  OnLost on_lost = OnLost::term;
  Millis kill_after = k_default_kill_after;
  std::optional<Millis> hold_min;
  std::optional<Millis> max_hold;
  bool wait_descendants = false;
  // --once-per DUR: after CMD exits 0 (and the lock was not lost), record the
  // completion in the current window before releasing (lock::record_done).
  std::optional<Millis> once_per;
  std::string label; // "run \"NAME\" on URL", for messages
  // What rlock, executed again by CMD's guardian after rlock's death, needs to
  // release the locks (encode_release_spec).
  std::string release_spec;
};

// The signals `run` handles, to block before the lock is even requested (so a
// Ctrl-C while waiting is seen) and before any thread starts.
SignalFd make_run_signals();

// CMD's guardian for this run, started before the lock is requested; CMD
// starts when supervise() or supervise_unlocked() is given it.
Guarded prepare_guardian(const RunSpec& spec);

// `rlock run` once the locks are held (`acquired`, one
// result per spec.locks): starts CMD (RLOCK_NAME and RLOCK_FENCE list the
// names and fencing tokens comma-separated, in the order given),
// renews from a watchdog thread, passes signals on to CMD's tree, stops the
// tree when the lock is lost or cannot be confirmed, or when CMD's guardian
// dies before it (Guarded), stops what CMD left running (or waits for it with
// --wait-descendants), releases (or keeps it for --hold-min), and returns the
// exit status: CMD's, or 76 when the lock was lost. Throws rlock::Error
// (126/127) when CMD cannot be started, after releasing the lock.
// With spec.once_per, a CMD that exited 0 while the lock held has its
// completion recorded before the release (a failure to record is a warning).
int supervise(lock::Store& store, const RunSpec& spec, const std::vector<lock::AcquireResult>& acquired,
              SignalFd& signals, Guarded& child);

// `run --if-unavailable run`, when Redis could not be reached to take the
// lock: CMD runs without it, handled as supervise() handles it (its own
// process group, signals passed on, what it leaves running stopped or waited
// for, --max-hold), with RLOCK_OWNER and RLOCK_FENCE empty and
// RLOCK_UNLOCKED=1 in its environment; nothing is renewed, recorded or
// released. Returns CMD's exit status (76 after --max-hold). Throws
// rlock::Error (126/127) when CMD cannot be started.
int supervise_unlocked(const RunSpec& spec, SignalFd& signals, Guarded& child);

} // namespace rlock::run
