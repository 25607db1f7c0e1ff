#pragma once

// `run`'s policies (--on-lost, --if-unavailable) and StopPlan, its pure
// decisions with time in them.

#include <rlock/core/clock.hpp>
#include <rlock/core/defaults.hpp>

#include <optional>

namespace rlock::run {

// What `run` does to CMD when the lock is lost (--on-lost).
enum class OnLost { term, kill, ignore };

// run --if-unavailable: what to do when Redis cannot be reached to take the
// lock (lock::acquisition_unavailable: never busy, auth or usage).
enum class IfUnavailable {
  fail, // exit 69 (default)
  skip, // run nothing, exit 0 with a warning
  run,  // run CMD without a lock (RLOCK_UNLOCKED=1), exit with its status
};

// The lease as the renewal thread can prove it (see LeaseClock).
struct LeaseView {
  TimePoint stop_at; // CMD must be stopping by then unless a renewal is confirmed
  TimePoint kill_at; // ... and dead by then
  bool lost = false; // a renewal found the lock gone or someone else's
};

// Every decision of `run` with time in it, as pure code: when to start the
// renewal thread, when and how to stop CMD's tree (lost lock, unconfirmed
// lease, --max-hold, processes left behind by CMD), when to escalate SIGTERM
// to SIGKILL, when the run is over, and its exit status. The supervisor feeds
// it facts and carries out each Step: signal first, log after. Unit-tested
// with made-up times.
class StopPlan {
public:
  struct Config {
    OnLost on_lost = OnLost::term;
    Millis kill_after = k_default_kill_after;
    TimePoint first_renewal;              // when the renewal thread is due
    std::optional<TimePoint> max_hold_at; // --max-hold: acquired + DUR
    std::optional<TimePoint> hold_until;  // --hold-min: acquired + DUR
    bool wait_descendants = false;        // hold while CMD's leftovers run
  };

  // Why CMD's tree is being stopped (for the message, after the signal).
  // lapsed: CMD's end was seen only once the lease could have ended (rlock
  // was stopped or the machine slept past it): CMD ran part of its time
  // unprotected; nothing is left to stop, but the run exits 76 (issue 41).
  enum class Why { none, lost, unconfirmed, max_hold, leftovers, orphaned, lapsed };

  struct Step {
    bool start_renewals = false;       // start the renewal thread now
    int signal = 0;                    // send this to CMD's whole tree now (0: none)
    Why why = Why::none;               // a stop that begins now, to report after signalling
    Why loss_ignored = Why::none;      // --on-lost ignore: a loss to report; CMD goes on
    bool finished = false;             // CMD and its whole tree are gone: end the run
    TimePoint wake = TimePoint::max(); // call step() again by then at the latest
  };

  explicit StopPlan(const Config& config);

  // What to do at `now`, given the lease, whether the renewal thread runs,
  // whether CMD has exited and whether its whole tree is gone.
  Step step(TimePoint now, const LeaseView& lease, bool renewing, bool cmd_exited, bool tree_empty);

  // The rlock process the caller started was killed: CMD's tree is stopped
  // with SIGKILL at the next step, as if rlock had been, and the run then
  // ends as usual (the lock is released). With --on-lost ignore the run ends
  // at the next step and CMD goes on, unprotected, as if rlock had died.
  void orphaned() { m_orphaned = true; }

  // The exit status of the run: 76 when the lock was lost (unless ignored),
  // its lease ran out before CMD's end was seen (lapsed) or --max-hold ran
  // out, else CMD's own.
  int exit_status(int cmd_status) const;

  // After a normal end: how long to keep the lock for --hold-min (nothing:
  // release it now). Never after a loss or --max-hold.
  std::optional<Millis> hold_for(TimePoint now) const;

  // How the run's locks are released once it is over, at `now`.
  struct Release {
    bool send = true;             // send a release at all
    std::optional<Millis> within; // nullopt: the usual release; else one try, never
                                  // resent, all of it within this long
  };
  // The usual release, unless the lease was lost (or could not be confirmed):
  // then the lock is not provably ours, and a release is of use only while it
  // may still be: one try, bounded by what is left until `lease.kill_at`, and
  // none at all from then on. So a run that lost its lease in a silent
  // partition ends at once instead of waiting on a server that does not answer.
  Release release(TimePoint now, const LeaseView& lease) const;

private:
  void stop(Step& step, TimePoint now, int signal, Why why, TimePoint latest_kill);

  Config m_config;
  bool m_lost = false;
  bool m_max_held = false;
  bool m_stopping = false;
  bool m_orphaned = false;
  bool m_orphan_handled = false;
  TimePoint m_kill_at = TimePoint::max();     // SIGTERM sent: SIGKILL then
  TimePoint m_next_rekill = TimePoint::max(); // SIGKILL sent, tree not yet gone
};

} // namespace rlock::run
