// StopPlan: every decision of `run` with time in it, pure (when to renew,
// stop, escalate, end, release, and the exit status).

#include <rlock/core/errors.hpp>
#include <rlock/run/policy.hpp>

#include <algorithm>
#include <csignal>

namespace rlock::run {

namespace {

constexpr TimePoint k_never = TimePoint::max();
// After a SIGKILL, the tree is looked at again this often until it is gone: a
// process may have forked between the look at /proc and the kill.
constexpr Millis k_rekill_every{100};

} // namespace

StopPlan::StopPlan(const Config& config) : m_config(config) {}

void StopPlan::stop(Step& step, TimePoint now, int signal, Why why, TimePoint latest_kill) {
  m_stopping = true;
  if (step.why == Why::none) {
    step.why = why;
  }
  if (signal == SIGKILL) {
    step.signal = SIGKILL;
    m_kill_at = k_never;
    m_next_rekill = now + k_rekill_every;
    return;
  }
  if (m_next_rekill != k_never) {
    return; // already killing
  }
  if (step.signal == 0) {
    step.signal = SIGTERM;
  }
  m_kill_at = std::min({m_kill_at, now + m_config.kill_after, latest_kill});
}

StopPlan::Step StopPlan::step(TimePoint now, const LeaseView& lease, bool renewing, bool cmd_exited,
                              bool tree_empty) {
  Step step;
  // --on-lost ignore and the rlock process was killed: CMD goes on, as if
  // rlock had died, and the lock is released.
  bool abandoned = m_orphaned && m_config.on_lost == OnLost::ignore;
  if ((cmd_exited && tree_empty) || abandoned) {
    // CMD's end seen only once the lease could have ended, with no stop
    // begun: rlock did not run from before the lease's stop time until after
    // its kill time (stopped, the machine asleep), so CMD may have run past
    // its lease, unprotected (issue 41).
    if (!m_lost && !abandoned && now >= lease.kill_at) {
      m_lost = true;
      (m_config.on_lost == OnLost::ignore ? step.loss_ignored : step.why) = Why::lapsed;
    }
    // The guardian lost, and CMD's tree gone before this turn (its keeper's
    // death killed CMD: a parent-death SIGKILL): nothing left to stop, but
    // why the run ends is said all the same.
    if (m_orphaned && !m_orphan_handled && !abandoned && step.why == Why::none) {
      m_orphan_handled = true;
      step.why = Why::orphaned;
    }
    step.finished = true;
    return step;
  }
  if (!renewing && now >= m_config.first_renewal) {
    step.start_renewals = true;
    renewing = true;
  }
  if (!m_lost && (lease.lost || now >= lease.stop_at)) {
    m_lost = true;
    Why why = lease.lost ? Why::lost : Why::unconfirmed;
    if (m_config.on_lost == OnLost::ignore) {
      step.loss_ignored = why;
    } else {
      // A lease we cannot confirm may still be ours on the server: CMD must be
      // dead by the time it could expire there.
      bool hard = m_config.on_lost == OnLost::kill || now >= lease.kill_at;
      stop(step, now, hard ? SIGKILL : SIGTERM, why, lease.lost ? k_never : lease.kill_at);
    }
  }
  if (m_orphaned && !m_orphan_handled) {
    m_orphan_handled = true;
    if (m_config.on_lost != OnLost::ignore) {
      stop(step, now, SIGKILL, Why::orphaned, k_never);
    }
  }
  if (!m_stopping && !m_max_held && m_config.max_hold_at && now >= *m_config.max_hold_at) {
    m_max_held = true;
    stop(step, now, m_config.on_lost == OnLost::kill ? SIGKILL : SIGTERM, Why::max_hold, k_never);
  }
  if (cmd_exited && !m_stopping && !m_config.wait_descendants) {
    // The lock is never released while something CMD started still runs.
    stop(step, now, SIGTERM, Why::leftovers, k_never);
  }
  if (now >= m_kill_at) {
    step.signal = SIGKILL;
    m_kill_at = k_never;
    m_next_rekill = now + k_rekill_every;
  } else if (now >= m_next_rekill) {
    step.signal = SIGKILL;
    m_next_rekill = now + k_rekill_every;
  }

  step.wake = std::min(m_kill_at, m_next_rekill);
  if (!m_lost) {
    step.wake = std::min(step.wake, lease.stop_at);
  }
  if (!m_stopping && !m_max_held && m_config.max_hold_at) {
    step.wake = std::min(step.wake, *m_config.max_hold_at);
  }
  if (!renewing) {
    step.wake = std::min(step.wake, m_config.first_renewal);
  }
  return step;
}

int StopPlan::exit_status(int cmd_status) const {
  if (m_orphaned && m_config.on_lost != OnLost::ignore) {
    return 128 + SIGKILL; // as if killed along with rlock (nobody is waiting for it)
  }
  if ((m_lost && m_config.on_lost != OnLost::ignore) || m_max_held) {
    return static_cast<int>(ExitCode::lost);
  }
  return cmd_status;
}

StopPlan::Release StopPlan::release(TimePoint now, const LeaseView& lease) const {
  if (!m_lost) {
    return {};
  }
  auto left = std::chrono::floor<Millis>(lease.kill_at - now);
  if (left <= Millis(0)) {
    return {false, std::nullopt};
  }
  return {true, left};
}

std::optional<Millis> StopPlan::hold_for(TimePoint now) const {
  if (!m_config.hold_until || m_lost || m_max_held || m_orphaned) {
    return std::nullopt;
  }
  auto left = std::chrono::ceil<Millis>(*m_config.hold_until - now);
  if (left <= Millis(0)) {
    return std::nullopt;
  }
  return left;
}

} // namespace rlock::run
