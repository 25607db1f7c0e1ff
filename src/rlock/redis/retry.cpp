// RetryPolicy and send_with_retries: the loop every request goes through (only
// a request that got no answer is sent again).

#include <rlock/core/log.hpp>
#include <rlock/redis/retry.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace rlock::redis {

Outcome outcome_of(RedisErrorKind kind) {
  switch (kind) {
  case RedisErrorKind::connect:
    return Outcome::not_sent;
  case RedisErrorKind::timeout:
  case RedisErrorKind::closed:
  case RedisErrorKind::io:
    return Outcome::unknown;
  case RedisErrorKind::loading:
  case RedisErrorKind::busy:
  case RedisErrorKind::tryagain:
  case RedisErrorKind::late:
    return Outcome::not_applied;
  default:
    return Outcome::final;
  }
}

void SendHistory::failed(RedisErrorKind kind, TimePoint started) {
  ++tries;
  Outcome outcome = outcome_of(kind);
  if (outcome != Outcome::not_sent && !first_sent) {
    first_sent = started;
  }
  if (outcome == Outcome::unknown) {
    ++unanswered;
  }
  if (outcome == Outcome::not_sent) {
    ++refused;
  }
}

RetryPolicy::RetryPolicy(Timeouts timeouts, Mode mode) : m_timeouts(timeouts), m_mode(mode) {}

Millis RetryPolicy::request_span() const {
  return m_timeouts.connect + 2 * m_timeouts.io;
}

Millis RetryPolicy::resend_window() const {
  return 2 * request_span();
}

Millis RetryPolicy::latch_lifetime() const {
  return 2 * resend_window();
}

Millis RetryPolicy::pause_after(int tries) {
  Millis pause{100};
  for (int i = 1; i < tries && pause < Millis(1000); ++i) {
    pause *= 2;
  }
  return std::min(pause, Millis(1000));
}

Millis RetryPolicy::renewal_backoff(int failures, Millis interval) {
  Millis cap = std::max(Millis(100), interval / 2);
  Millis pause{100};
  for (int i = 1; i < failures && pause < cap; ++i) {
    pause *= 2;
  }
  return std::min(pause, cap);
}

Millis RetryPolicy::renewal_timeout_cap(Millis interval) {
  return std::max(Millis(1), interval);
}

Millis RetryPolicy::timeout_cap_within(Millis budget) {
  return std::max(Millis(1), budget / 3);
}

RetryPolicy::Decision RetryPolicy::decide(RedisErrorKind kind, const SendHistory& history, TimePoint now,
                                          std::optional<TimePoint> deadline) const {
  const Decision give_up{Action::give_up, Millis(0)};
  Outcome outcome = outcome_of(kind);
  if (outcome == Outcome::final || m_mode == Mode::renewal || m_mode == Mode::once) {
    return give_up;
  }
  // A request that may already have been applied is resent only while its
  // latch is sure to answer the resend (the resend's whole span inside the window).
  if (history.latched && history.unanswered > 0 && history.first_sent &&
      now + request_span() > *history.first_sent + resend_window()) {
    return give_up;
  }
  // Nothing reached the node, and the deployment will say again where to go.
  if (outcome == Outcome::not_sent && history.reroutes && history.refused == 1 &&
      (m_mode == Mode::one_shot || (deadline && now < *deadline))) {
    return {Action::resend_now, Millis(0)};
  }
  if (m_mode == Mode::one_shot) {
    switch (outcome) {
    case Outcome::unknown:
      return history.unanswered <= 1 ? Decision{Action::resend_now, Millis(0)} : give_up;
    case Outcome::not_applied: {
      TimePoint until = history.first_sent.value_or(now) + request_span();
      if (now >= until) {
        return give_up;
      }
      auto left = std::chrono::ceil<Millis>(until - now);
      return {Action::resend_after_pause, std::min(pause_after(history.tries), left)};
    }
    default:
      return give_up; // not_sent: a one-shot command fails at once
    }
  }
  if (!deadline || now >= *deadline) {
    return give_up;
  }
  if (outcome == Outcome::not_sent && !history.reached && !history.first_sent) {
    return give_up; // never reached the server: a wrong URL, or a server that is down
  }
  if (outcome == Outcome::unknown) {
    return {Action::resend_now, Millis(0)};
  }
  auto left = std::chrono::ceil<Millis>(*deadline - now);
  return {Action::resend_after_pause, std::min(pause_after(history.tries), left)};
}

Reply send_with_retries(const RetryScope& scope, const std::function<Reply()>& send) {
  SendHistory history;
  history.latched = scope.latched;
  history.reached = scope.reached;
  std::optional<RedisError> first_unanswered;
  // When every unanswered send carried a deadline: the time after which none
  // of them can take effect any more (issue 34).
  std::optional<TimePoint> settles;
  bool unsettled = false; // an unanswered send without one
  for (;;) {
    TimePoint started = Clock::now();
    try {
      return send();
    } catch (const RedisError& e) {
      history.failed(e.kind(), started);
      history.reroutes = scope.reroutes && scope.reroutes();
      if (outcome_of(e.kind()) == Outcome::unknown) {
        if (!first_unanswered) {
          first_unanswered = e;
        }
        if (auto at = e.settles_at()) {
          settles = std::max(settles.value_or(*at), *at);
        } else if (e.kind() != RedisErrorKind::closed) {
          unsettled = true; // (closed: the server closed it, it reads nothing more of it)
        }
      }
      auto decision = scope.policy.decide(e.kind(), history, Clock::now(), scope.deadline);
      if (decision.action == RetryPolicy::Action::give_up) {
        // Giving up on a request: not before it can no longer take effect
        // (a few ms after its reply was due: the clock sample's round trip).
        if (settles && *settles > Clock::now()) {
          std::this_thread::sleep_until(*settles);
        }
        const char* fate = unsettled || !settles ? "it may still be applied"
                                                 : "it may have been applied before rlock gave up, never after";
        Outcome last = outcome_of(e.kind());
        if (first_unanswered && (last == Outcome::not_sent || last == Outcome::not_applied)) {
          throw RedisError(first_unanswered->kind(),
                           fmt::format("{} (after a request that got no reply: {})", e.what(), fate));
        }
        if (first_unanswered && settles && !unsettled) {
          throw RedisError(e.kind(), fmt::format("{} ({})", e.what(), fate));
        }
        throw;
      }
      log::debug("sending again ({}): {}", history.tries, e.what());
      if (decision.action == RetryPolicy::Action::resend_after_pause) {
        TimePoint until = Clock::now() + decision.pause;
        if (scope.pause) {
          scope.pause(until);
        } else {
          std::this_thread::sleep_until(until);
        }
      }
    }
  }
}

} // namespace rlock::redis
