// `rlock check`'s verdicts, pure: each lock's figures (held for, lease left,
// waiters, last renewal and completion) judged against the thresholds.

#include <rlock/cli/check_judge.hpp>

#include <algorithm>

namespace rlock::cli {

namespace {

int check_severity(CheckState state) {
  switch (state) {
  case CheckState::ok:
    return 0;
  case CheckState::unknown:
    return 1;
  case CheckState::warning:
    return 2;
  case CheckState::critical:
    return 3;
  }
  return 1;
}

// The oldest acquisition time any rlock record of the lock notes.
std::optional<long long> check_oldest_acquisition(const lock::LockState& state) {
  std::optional<long long> oldest;
  auto take = [&](const std::optional<lock::HolderRecord>& record) {
    if (record && record->acquired_at_ms && (!oldest || *record->acquired_at_ms < *oldest)) {
      oldest = record->acquired_at_ms;
    }
  };
  take(state.record);
  for (const auto& holder : state.holders) {
    take(holder.record);
  }
  return oldest;
}

// The latest time any holder's record says its lease was set: its last
// renewal, else its acquisition.
std::optional<long long> check_latest_renewal(const lock::LockState& state) {
  std::optional<long long> latest;
  auto take = [&](const std::optional<lock::HolderRecord>& record) {
    if (!record) {
      return;
    }
    auto at = record->renewed_at_ms ? record->renewed_at_ms : record->acquired_at_ms;
    if (at && (!latest || *at > *latest)) {
      latest = at;
    }
  };
  take(state.record);
  for (const auto& holder : state.holders) {
    take(holder.record);
  }
  return latest;
}

Millis check_since(long long now_ms, long long then_ms) {
  return Millis(std::max(0LL, now_ms - then_ms));
}

} // namespace

CheckState worse(CheckState a, CheckState b) {
  return check_severity(a) >= check_severity(b) ? a : b;
}

std::string_view state_word(CheckState state) {
  switch (state) {
  case CheckState::ok:
    return "OK";
  case CheckState::warning:
    return "WARNING";
  case CheckState::critical:
    return "CRITICAL";
  case CheckState::unknown:
    return "UNKNOWN";
  }
  return "UNKNOWN";
}

LockFigures figures_of(const lock::LockState& state) {
  LockFigures figures;
  figures.held = state.held();
  figures.waiters = static_cast<long long>(state.waiters.size());
  const auto now = state.server_now_ms;
  if (figures.held) {
    if (state.layout == lock::Layout::semaphore) {
      // Its key never expires (Redisson's layout): each permit has its own
      // lease, and it is free once the last one ends.
      for (const auto& permit : state.holders) {
        if (permit.ttl.count() == -1) {
          figures.no_expiry = true;
        } else if (permit.ttl.count() >= 0 && (!figures.ttl || permit.ttl > *figures.ttl)) {
          figures.ttl = permit.ttl;
        }
      }
      if (figures.no_expiry) {
        figures.ttl.reset();
      }
    } else if (state.ttl.count() >= 0) {
      figures.ttl = state.ttl;
    } else if (state.ttl.count() == -1) {
      figures.no_expiry = true;
    }
    if (auto acquired = check_oldest_acquisition(state); acquired && now) {
      figures.held_for = check_since(*now, *acquired);
    }
    if (auto renewed = check_latest_renewal(state); renewed && now) {
      figures.renewed_ago = check_since(*now, *renewed);
    }
  } else {
    figures.held_for = Millis(0);
  }
  if (state.last_done && state.last_done->readable()) {
    figures.done_at_ms = state.last_done->done_at_ms;
    if (now) {
      figures.done_ago = check_since(*now, *figures.done_at_ms);
    }
  }
  return figures;
}

LockVerdict judge_lock(const lock::LockState& state, const CheckSpec& spec,
                       const std::optional<lock::HolderVerdict>& holder) {
  LockVerdict verdict;
  verdict.figures = figures_of(state);
  const auto& figures = verdict.figures;
  auto make = [](CheckState found, Problem problem, Millis value = Millis(0), Millis limit = Millis(0)) {
    Finding finding;
    finding.state = found;
    finding.problem = problem;
    finding.value = value;
    finding.limit = limit;
    return finding;
  };
  auto add = [&](Finding finding) {
    verdict.state = worse(verdict.state, finding.state);
    verdict.findings.push_back(std::move(finding));
  };
  const bool time_known = state.server_now_ms.has_value();
  if (spec.held_longer && figures.held) {
    if (!time_known) {
      add(make(CheckState::unknown, Problem::no_server_time));
    } else if (!figures.held_for) {
      add(make(CheckState::unknown, Problem::held_since_unknown));
    } else if (*figures.held_for > spec.held_longer->crit) {
      add(make(CheckState::critical, Problem::held_too_long, *figures.held_for, spec.held_longer->crit));
    } else if (*figures.held_for > spec.held_longer->warn) {
      add(make(CheckState::warning, Problem::held_too_long, *figures.held_for, spec.held_longer->warn));
    }
  }
  if (spec.dead_holder && figures.held && holder && holder->gone) {
    auto finding = make(CheckState::critical, Problem::holder_dead);
    finding.detail = holder->why;
    add(finding);
  }
  if (spec.waiters) {
    auto finding = make(CheckState::ok, Problem::too_many_waiters);
    finding.count = figures.waiters;
    if (figures.waiters > spec.waiters->crit) {
      finding.state = CheckState::critical;
      finding.limit_count = spec.waiters->crit;
    } else if (figures.waiters > spec.waiters->warn) {
      finding.state = CheckState::warning;
      finding.limit_count = spec.waiters->warn;
    }
    if (finding.state != CheckState::ok) {
      add(finding);
    }
  }
  if (spec.ttl_none && figures.no_expiry) {
    add(make(CheckState::critical, Problem::no_expiry));
  }
  if (spec.done_within) {
    if (!state.last_done || !state.last_done->readable()) {
      auto finding = make(CheckState::critical, Problem::never_done, Millis(0), *spec.done_within);
      finding.detail = state.last_done ? "unreadable" : "";
      add(finding);
    } else if (!figures.done_ago) {
      add(make(CheckState::unknown, Problem::no_server_time));
    } else if (*figures.done_ago > *spec.done_within) {
      add(make(CheckState::critical, Problem::done_too_long_ago, *figures.done_ago, *spec.done_within));
    }
  }
  return verdict;
}

} // namespace rlock::cli
