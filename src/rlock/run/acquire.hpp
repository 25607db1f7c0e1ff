#pragma once

// `run`'s acquisition and what it decides on failure (--if-unavailable) and
// after success (--once-per).

#include <rlock/redis/errors.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/lock/store.hpp>
#include <rlock/run/policy.hpp>
#include <rlock/run/supervisor.hpp>

#include <optional>

namespace rlock::run {

// What `run` does after an acquisition failed with a RedisError of `kind`,
// given --if-unavailable: only an unavailable Redis (lock::acquisition_unavailable,
// from the error's kind, never an exit code: -E may make busy 69) is skipped
// or run without the lock; every other error fails. Pure.
enum class OnAcquireError {
  fail,         // the error ends the run (its exit code)
  skip,         // run nothing, exit 0 with a warning
  run_unlocked, // run CMD without a lock
};
OnAcquireError on_acquire_error(RedisErrorKind kind, IfUnavailable policy);

// How `run`'s acquisition ended.
struct RunAcquisition {
  enum class Kind {
    acquired,     // every lock is held (taken.results)
    busy,         // one was busy at the deadline (taken.busy); nothing is held
    skip,         // Redis unavailable, --if-unavailable skip (`unavailable` says why)
    run_unlocked, // Redis unavailable, --if-unavailable run (`unavailable` says why)
  };
  Kind kind = Kind::acquired;
  lock::Taken taken;
  std::optional<RedisError> unavailable;
};

// Takes spec.locks as spec.request says (lock::acquire_all) and decides what
// an unavailable Redis means (on_acquire_error). Throws every other error
// (and an unavailable one with IfUnavailable::fail).
RunAcquisition acquire_for_run(lock::Store& store, const RunSpec& spec, IfUnavailable policy, SignalFd* signals,
                               const lock::NamedBusyCallback& on_busy);

// run --once-per, the locks just taken: whether the job was done in the
// current window, read while holding the lock (no run can record meanwhile).
struct OncePerCheck {
  lock::OnceVerdict verdict = lock::OnceVerdict::not_done;
  lock::Window window;                     // the current window, on the server's clock
  std::optional<lock::DoneRecord> last_done; // the record read
};

// Reads the first lock's once-per record (Store::inspect) and judges it
// (lock::judge_once, windows of *spec.once_per). When the job need not run
// (done, or a record that cannot be read) the locks are released before it
// returns (a release that fails is a warning: the lock expires by its
// lease). Releases them too before it throws: what the read threw, or
// RedisError(protocol) for an answer without the server's time.
OncePerCheck check_once_per(lock::Store& store, const RunSpec& spec);

// Notes in each lock's history that this run did not run CMD (`why`:
// "unavailable", "done in window"): best effort, once, with short timeouts.
void log_skipped(lock::Store& store, const RunSpec& spec, const std::string& why) noexcept;

} // namespace rlock::run
