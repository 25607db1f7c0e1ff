#pragma once

// `rlock check`'s states, thresholds and verdicts, pure: a lock's figures on
// the server's clock and what the check makes of them (also status's metrics).

#include <rlock/core/duration.hpp>
#include <rlock/lock/liveness.hpp>
#include <rlock/lock/lock.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// `rlock check`: a monitoring plugin's states, by the Monitoring Plugins
// guidelines (its exit status is the number).
enum class CheckState { ok = 0, warning = 1, critical = 2, unknown = 3 };

// The worse of two states in the order of the Monitoring Plugins' max_state_alt:
// OK < UNKNOWN < WARNING < CRITICAL (a real alarm is never hidden behind a lock
// that could not be judged). Pure.
CheckState worse(CheckState a, CheckState b);

// "OK", "WARNING", "CRITICAL", "UNKNOWN".
std::string_view state_word(CheckState state);

// WARN,CRIT of a threshold: above warn is WARNING, above crit CRITICAL (warn <= crit).
template <class T> struct Thresholds {
  T warn;
  T crit;
};

// What `rlock check` is asked to judge; what is not set is not judged.
struct CheckSpec {
  std::optional<Thresholds<Millis>> held_longer; // held for more than this
  bool dead_holder = false;                      // CRITICAL when force-unlock --if-dead would remove it
  std::optional<Thresholds<long long>> waiters;  // more waiters than this (a fair lock's queue)
  bool ttl_none = false;                         // CRITICAL when held without an expiry
  std::optional<Millis> done_within;             // run --once-per: last completion older, or none: CRITICAL
};

// The figures of one lock, as check's perfdata and the metrics show them, all
// on the server's clock (state.server_now_ms); nullopt: not known or not
// applicable. Pure.
struct LockFigures {
  bool held = false;
  // Since the oldest acquisition rlock recorded (its record, or a reader's or
  // a permit's); 0 when free.
  std::optional<Millis> held_for;
  std::optional<Millis> ttl; // the lease left when held with an expiry (a semaphore: its longest permit's)
  bool no_expiry = false;    // held, and the key (a semaphore: a permit) has no expiry
  long long waiters = 0;     // a fair lock's queue
  // Since the latest renewal noted in a holder's record, else its acquisition
  // (the last time a lease was set).
  std::optional<Millis> renewed_ago;
  std::optional<long long> done_at_ms; // the last completion of run --once-per (readable)
  std::optional<Millis> done_ago;
};
LockFigures figures_of(const lock::LockState& state);

// One thing check found wrong with a lock.
enum class Problem {
  held_too_long,      // value: held for; limit: the threshold crossed
  held_since_unknown, // --held-longer on a held lock with no acquisition time (no rlock record)
  holder_dead,        // --dead-holder: detail is the liveness verdict's why
  too_many_waiters,   // count: waiters; limit_count: the threshold crossed
  no_expiry,          // --ttl-none
  done_too_long_ago,  // value: since the last completion; limit: DUR
  never_done,         // --done-within: no completion recorded (or none readable: detail says)
  no_server_time,     // a time-based check without the server's clock
};

struct Finding {
  CheckState state = CheckState::ok;
  Problem problem = Problem::held_too_long;
  Millis value{0};
  Millis limit{0};
  long long count = 0;
  long long limit_count = 0;
  std::string detail;
};

struct LockVerdict {
  CheckState state = CheckState::ok; // the worst of its findings
  std::vector<Finding> findings;     // in the order of the options above
  LockFigures figures;
};

// Judges one lock by `spec`. `holder`: judge_holder's verdict on it (needed
// only with spec.dead_holder and a held lock; nullopt otherwise). Pure.
LockVerdict judge_lock(const lock::LockState& state, const CheckSpec& spec,
                       const std::optional<lock::HolderVerdict>& holder);

} // namespace rlock::cli
