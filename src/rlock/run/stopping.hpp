#pragma once

// What `run` does to CMD's tree at each turn of its loop, without the loop's
// I/O: StopPlan's step carried out on a ProcessTree (signals first), said after.
//
// The seam run/'s decisions are tested through: a fake tree in
// tests/unit/test_run_stopping.cpp (as ninja tests its builder on a fake
// command runner), the live one (/proc, kill) in the supervisor.

#include <rlock/core/clock.hpp>
#include <rlock/run/policy.hpp>
#include <rlock/run/tree.hpp>
#include <rlock/run/watchdog.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rlock::run {

class Guarded;

// The process tree below CMD's guardian, as `run` acts on it.
class ProcessTree {
public:
  virtual ~ProcessTree() = default;
  // Sends `sig` to CMD's process group and to every live descendant outside
  // it (each once); returns the descendants found, for messages.
  virtual std::vector<Process> signal(int sig) = 0;
  // Every live descendant now.
  virtual std::vector<Process> alive() = 0;
};

// CMD's tree as /proc shows it and kill(2) reaches it (run/tree): below the
// guardian while it lives, below this process after.
class LiveTree final : public ProcessTree {
public:
  explicit LiveTree(const Guarded& child) : m_child(child) {}
  std::vector<Process> signal(int sig) override;
  std::vector<Process> alive() override;

private:
  const Guarded& m_child;
};

// One line for stderr (log::error, log::warning, log::info).
struct Said {
  enum class Level { error, warning, info };
  Level level = Level::info;
  std::string text;

  bool operator==(const Said&) const = default;
};

class Stopping {
public:
  struct Settings {
    std::string label;              // "run \"NAME\" on URL", for messages
    std::optional<Millis> max_hold; // --max-hold, for its message
  };
  // What the supervisor knows at this turn.
  struct Facts {
    bool renewing = false;   // the renewal thread runs
    bool cmd_exited = false; // CMD has exited
    bool tree_empty = false; // ... and nothing of its tree is left
  };
  struct Turn {
    bool finished = false;             // CMD and its whole tree are gone: end the run
    bool start_renewals = false;       // start the renewal thread now
    TimePoint wake = TimePoint::max(); // turn again by then at the latest
    std::vector<Said> said;            // to say now, in order: the signals are sent
  };

  Stopping(const StopPlan::Config& config, Settings settings);

  // Asks the plan what to do at `now` and does it on `tree`: a stop signals
  // the whole tree (SIGTERM, then SIGCONT, so a stopped process acts on it),
  // and only then is it put into words: why (the lease's reason, --max-hold,
  // what CMD left running, its guardian's death) and with which signal.
  // With --wait-descendants, CMD's exit with processes left says it waits
  // for them (named), once. CMD's end seen only after the lease ran out says
  // when it ran out and how long rlock did not run (since the turn before).
  // A lease stopped for as unconfirmed while its renewal is still in flight
  // (the renewal thread runs, no error known yet: last_error empty) is put into words once the
  // renewal's error is known (after the watchdog's warning about it), the
  // lease's kill time comes, or the run ends, whichever is first: the
  // signals are sent at once all the same.
  // Called again before the wake time asked for at the latest.
  Turn turn(TimePoint now, const LeaseState& lease, const Facts& facts, ProcessTree& tree);

  // The plan: orphaned(), exit_status(), release(), hold_for().
  StopPlan& plan() { return m_plan; }

private:
  Said stop_said(const StopPlan::Step& step, const LeaseState& lease,
                 const std::vector<Process>& signalled) const;

  StopPlan::Config m_config;
  StopPlan m_plan;
  Settings m_settings;
  bool m_exit_seen = false;
  // An unconfirmed lease's stop, done but not yet said (see turn()).
  struct Unsaid {
    StopPlan::Step step;
    std::vector<Process> signalled;
  };
  std::optional<Unsaid> m_unsaid;
  std::optional<TimePoint> m_last_turn; // the turn before: rlock was running then
};

} // namespace rlock::run
