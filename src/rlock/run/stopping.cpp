// StopPlan's steps carried out on CMD's tree (signals first) and put into
// words after; the live tree through /proc and kill(2) (run/stopping.hpp).

#include <rlock/core/duration.hpp>
#include <rlock/run/spawn.hpp>
#include <rlock/run/stopping.hpp>

#include <fmt/format.h>

#include <csignal>

namespace rlock::run {

std::vector<Process> LiveTree::signal(int sig) {
  return signal_tree(m_child.tree_root(), m_child.cmd(), sig);
}

std::vector<Process> LiveTree::alive() {
  return descendants(m_child.tree_root());
}

Stopping::Stopping(const StopPlan::Config& config, Settings settings)
    : m_config(config), m_plan(config), m_settings(std::move(settings)) {}

namespace {

const char* stop_signal_name(int sig) {
  return sig == SIGKILL ? "SIGKILL" : "SIGTERM";
}

// What happened to the lock: lost (a renewal proved it), or not confirmed
// in time, which with replicas may mean the primary has it and no replica
// does (a failover would lose it).
std::string loss_phrase(StopPlan::Why why, const LeaseState& lease) {
  if (why == StopPlan::Why::lost) {
    return "lock lost: " + lease.lost_reason;
  }
  if (lease.last_unsynced) {
    return fmt::format("no replica confirmed the renewal in time: the lock may still be held on the primary, "
                       "but a failover would promote a replica without it ({})",
                       lease.last_error);
  }
  return fmt::format("lock lost: no renewal could be confirmed in time{}",
                     lease.last_error.empty() ? "" : " (" + lease.last_error + ")");
}

} // namespace

Said Stopping::stop_said(const StopPlan::Step& step, const LeaseState& lease,
                         const std::vector<Process>& signalled) const {
  const auto& label = m_settings.label;
  switch (step.why) {
  case StopPlan::Why::lost:
  case StopPlan::Why::unconfirmed:
    return {Said::Level::error, fmt::format("{}: {}; stopping CMD ({})", label, loss_phrase(step.why, lease),
                                            stop_signal_name(step.signal))};
  case StopPlan::Why::max_hold:
    return {Said::Level::error, fmt::format("{}: held for --max-hold {}; stopping CMD ({})", label,
                                            format_duration(m_settings.max_hold.value_or(Millis(0))),
                                            stop_signal_name(step.signal))};
  case StopPlan::Why::leftovers:
    return {Said::Level::warning,
            fmt::format("{}: CMD exited but left {} running; stopping {} (SIGTERM, SIGKILL after {}) before "
                        "releasing the lock (--wait-descendants waits for them instead)",
                        label, signalled.empty() ? std::string("processes") : describe(signalled),
                        signalled.size() == 1 ? "it" : "them", format_duration(m_config.kill_after))};
  case StopPlan::Why::orphaned:
    return {Said::Level::error,
            fmt::format(
                "{}: rlock's guardian process (rlock-guardian, CMD's parent) ended before CMD; stopping CMD "
                "(SIGKILL) and releasing the lock",
                label)};
  case StopPlan::Why::none:
  case StopPlan::Why::lapsed: // nothing left to stop: said as the run ends (turn)
    break;
  }
  return {};
}

Stopping::Turn Stopping::turn(TimePoint now, const LeaseState& lease, const Facts& facts, ProcessTree& tree) {
  Turn turn;
  if (facts.cmd_exited && !m_exit_seen) {
    m_exit_seen = true;
    if (!facts.tree_empty && m_config.wait_descendants) {
      turn.said.push_back(
          {Said::Level::info, fmt::format("{}: CMD exited; holding the lock until what it left running ends "
                                          "(--wait-descendants): {}",
                                          m_settings.label, describe(tree.alive()))});
    }
  }
  auto step = m_plan.step(now, {lease.stop_at, lease.kill_at, lease.lost}, facts.renewing, facts.cmd_exited,
                          facts.tree_empty);
  const TimePoint last_turn = m_last_turn.value_or(now);
  m_last_turn = now;
  turn.finished = step.finished;
  turn.start_renewals = step.start_renewals;
  turn.wake = step.wake;
  if (step.finished) {
    const auto lapsed = step.why == StopPlan::Why::lapsed ? step.why : step.loss_ignored;
    if (m_unsaid) {
      turn.said.push_back(stop_said(m_unsaid->step, lease, m_unsaid->signalled));
      m_unsaid.reset();
    }
    if (step.why == StopPlan::Why::orphaned) {
      turn.said.push_back(stop_said(step, lease, {})); // its tree was gone already
    }
    if (lapsed == StopPlan::Why::lapsed) {
      turn.said.push_back(
          {step.why == lapsed ? Said::Level::error : Said::Level::warning,
           fmt::format(
               "{}: lock lost: the lease ran out {} before CMD's end was seen: rlock did not run for {} "
               "(stopped, or the machine slept), so CMD ran part of its time unprotected{}",
               m_settings.label, format_duration(std::chrono::floor<Millis>(now - lease.kill_at)),
               format_duration(std::chrono::floor<Millis>(now - last_turn)),
               step.why == lapsed ? "" : " (--on-lost ignore)")});
    }
    return turn;
  }
  // Stop first, say after: nothing about stopping CMD waits on output.
  std::vector<Process> signalled;
  if (step.signal != 0) {
    signalled = tree.signal(step.signal);
    if (step.signal == SIGTERM) {
      tree.signal(SIGCONT); // a stopped process acts on SIGTERM only once continued
    }
  }
  // An unconfirmed lease's stop waits to be said until the renewal's error
  // is known (the watchdog's warning first), or the lease's kill time.
  if (m_unsaid && (!lease.last_error.empty() || lease.lost || now >= lease.kill_at)) {
    turn.said.push_back(stop_said(m_unsaid->step, lease, m_unsaid->signalled));
    m_unsaid.reset();
  }
  if (step.loss_ignored != StopPlan::Why::none) {
    turn.said.push_back(
        {Said::Level::warning, fmt::format("{}: {}; --on-lost ignore: CMD keeps running unprotected",
                                           m_settings.label, loss_phrase(step.loss_ignored, lease))});
  }
  if (step.why == StopPlan::Why::unconfirmed && facts.renewing && !lease.lost && lease.last_error.empty() &&
      now < lease.kill_at && !m_unsaid) {
    m_unsaid = Unsaid{step, std::move(signalled)};
  } else if (step.why != StopPlan::Why::none) {
    turn.said.push_back(stop_said(step, lease, signalled));
  }
  if (m_unsaid) {
    turn.wake = std::min(turn.wake, lease.kill_at);
  }
  return turn;
}

} // namespace rlock::run
