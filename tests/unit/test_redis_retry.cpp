#include <rlock/redis/retry.hpp>

#include <doctest/doctest.h>

using rlock::Millis;
using rlock::RedisError;
using rlock::RedisErrorKind;
using rlock::TimePoint;
using rlock::redis::Outcome;
using rlock::redis::RetryPolicy;
using rlock::redis::SendHistory;
using Action = RetryPolicy::Action;

namespace {
const rlock::redis::Timeouts k_timeouts{Millis(2000), Millis(2000)};
const TimePoint t0{};

SendHistory after(std::initializer_list<RedisErrorKind> kinds, bool latched, Millis step = Millis(0)) {
  SendHistory history;
  history.latched = latched;
  TimePoint t = t0;
  for (auto kind : kinds) {
    history.failed(kind, t);
    t += step;
  }
  return history;
}
} // namespace

TEST_CASE("retry: error kinds are classified by what they say about the request") {
  CHECK(rlock::redis::outcome_of(RedisErrorKind::connect) == Outcome::not_sent);
  for (auto kind : {RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io}) {
    CHECK(rlock::redis::outcome_of(kind) == Outcome::unknown);
  }
  CHECK(rlock::redis::outcome_of(RedisErrorKind::loading) == Outcome::not_applied);
  CHECK(rlock::redis::outcome_of(RedisErrorKind::busy) == Outcome::not_applied);
  for (auto kind :
       {RedisErrorKind::auth, RedisErrorKind::protocol, RedisErrorKind::server, RedisErrorKind::oom,
        RedisErrorKind::readonly, RedisErrorKind::moved, RedisErrorKind::ask, RedisErrorKind::noscript}) {
    CHECK(rlock::redis::outcome_of(kind) == Outcome::final);
  }
}

TEST_CASE("retry: the figures derive from the timeouts") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::one_shot);
  CHECK(policy.request_span() == Millis(6000));
  CHECK(policy.resend_window() == Millis(12'000));
  CHECK(policy.latch_lifetime() == Millis(24'000));
  RetryPolicy fast({Millis(2000), Millis(200)}, RetryPolicy::Mode::waiter);
  CHECK(fast.latch_lifetime() == Millis(9600));
}

TEST_CASE("retry: a one-shot command resends an unanswered request once, at once") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::one_shot);
  for (auto kind : {RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io}) {
    auto history = after({kind}, true);
    CHECK(policy.decide(kind, history, t0 + Millis(2000), std::nullopt).action == Action::resend_now);
    history.failed(kind, t0 + Millis(2000));
    CHECK(policy.decide(kind, history, t0 + Millis(4000), std::nullopt).action == Action::give_up);
  }
  // Unlatched requests (renew, inspect) follow the same count.
  auto history = after({RedisErrorKind::timeout, RedisErrorKind::timeout}, false);
  CHECK(policy.decide(RedisErrorKind::timeout, history, t0, std::nullopt).action == Action::give_up);
}

TEST_CASE("retry: a one-shot command gives up at once when it cannot connect") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::one_shot);
  auto history = after({RedisErrorKind::connect}, true);
  CHECK_FALSE(history.first_sent); // nothing was sent
  CHECK(policy.decide(RedisErrorKind::connect, history, t0, std::nullopt).action == Action::give_up);
}

TEST_CASE("retry: where the deployment reroutes, the first refused connection is resent at once") {
  // Issue 33: run's release after a crash failover went to the dead primary of
  // the slot map it acquired with; the node that refused is forgotten, and the
  // resend goes where the cluster (or the sentinels) now say.
  auto refused_once = [](bool reroutes) {
    auto history = after({RedisErrorKind::connect}, true);
    history.reroutes = reroutes;
    return history;
  };
  RetryPolicy one_shot(k_timeouts, RetryPolicy::Mode::one_shot);
  CHECK(one_shot.decide(RedisErrorKind::connect, refused_once(true), t0, std::nullopt).action ==
        Action::resend_now);
  CHECK(one_shot.decide(RedisErrorKind::connect, refused_once(false), t0, std::nullopt).action ==
        Action::give_up); // a standalone server that is down: nowhere else to go
  auto twice = after({RedisErrorKind::connect, RedisErrorKind::connect}, true);
  twice.reroutes = true;
  CHECK(one_shot.decide(RedisErrorKind::connect, twice, t0, std::nullopt).action == Action::give_up);
  RetryPolicy waiter(k_timeouts, RetryPolicy::Mode::waiter);
  CHECK(waiter.decide(RedisErrorKind::connect, refused_once(true), t0, t0 + Millis(5000)).action ==
        Action::resend_now);
  CHECK(waiter.decide(RedisErrorKind::connect, refused_once(true), t0 + Millis(5000), t0 + Millis(5000)).action ==
        Action::give_up);
  // The renewal thread's own loop retries; once (after a lost lease) is one try.
  for (auto mode : {RetryPolicy::Mode::renewal, RetryPolicy::Mode::once}) {
    RetryPolicy policy(k_timeouts, mode);
    CHECK(policy.decide(RedisErrorKind::connect, refused_once(true), t0, std::nullopt).action == Action::give_up);
  }
  // A refusal after an unanswered send of a latched request keeps the latch rule.
  auto late = after({RedisErrorKind::timeout, RedisErrorKind::connect}, true, Millis(6000));
  late.reroutes = true;
  CHECK(one_shot.decide(RedisErrorKind::connect, late, t0 + Millis(7000), std::nullopt).action ==
        Action::give_up);
}

TEST_CASE("retry: LOADING and BUSY are resent after a pause, one-shot within one request span") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::one_shot);
  auto history = after({RedisErrorKind::loading}, true);
  auto d = policy.decide(RedisErrorKind::loading, history, t0 + Millis(5), std::nullopt);
  CHECK(d.action == Action::resend_after_pause);
  CHECK(d.pause == Millis(100));
  history = after({RedisErrorKind::busy, RedisErrorKind::busy, RedisErrorKind::busy}, true);
  d = policy.decide(RedisErrorKind::busy, history, t0 + Millis(700), std::nullopt);
  CHECK(d.action == Action::resend_after_pause);
  CHECK(d.pause == Millis(400));
  d = policy.decide(RedisErrorKind::busy, history, t0 + Millis(5950), std::nullopt);
  CHECK(d.pause == Millis(50)); // never past the span
  CHECK(policy.decide(RedisErrorKind::busy, history, t0 + Millis(6000), std::nullopt).action ==
        Action::give_up);
}

TEST_CASE("retry: errors that resending cannot fix end at once") {
  for (auto mode : {RetryPolicy::Mode::one_shot, RetryPolicy::Mode::waiter}) {
    RetryPolicy policy(k_timeouts, mode);
    for (auto kind :
         {RedisErrorKind::auth, RedisErrorKind::protocol, RedisErrorKind::server, RedisErrorKind::oom,
          RedisErrorKind::readonly, RedisErrorKind::moved, RedisErrorKind::ask}) {
      auto history = after({kind}, false);
      CHECK(policy.decide(kind, history, t0, t0 + Millis(60'000)).action == Action::give_up);
    }
  }
}

TEST_CASE("retry: a waiter keeps trying until its deadline") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::waiter);
  const TimePoint deadline = t0 + Millis(30'000);
  auto history = after({RedisErrorKind::connect}, true);
  // A waiter that never reached the server (wrong URL, server down) fails at once.
  CHECK(policy.decide(RedisErrorKind::connect, history, t0, deadline).action == Action::give_up);
  // Once it has had an answer (busy), it waits out a restart.
  history = after({RedisErrorKind::connect, RedisErrorKind::connect}, true);
  history.reached = true;
  auto d = policy.decide(RedisErrorKind::connect, history, t0 + Millis(20'000), deadline);
  CHECK(d.action == Action::resend_after_pause);
  CHECK(d.pause == Millis(200));
  d = policy.decide(RedisErrorKind::connect, history, t0 + Millis(29'950), deadline);
  CHECK(d.pause == Millis(50)); // clipped to the deadline
  CHECK(policy.decide(RedisErrorKind::connect, history, deadline, deadline).action == Action::give_up);
  // An unanswered request of an unlatched op (own token) is resent until the deadline.
  history =
      after({RedisErrorKind::timeout, RedisErrorKind::timeout, RedisErrorKind::timeout}, false, Millis(2000));
  CHECK(policy.decide(RedisErrorKind::timeout, history, t0 + Millis(25'000), deadline).action ==
        Action::resend_now);
  CHECK(policy.decide(RedisErrorKind::timeout, history, deadline, deadline).action == Action::give_up);
}

TEST_CASE("retry: a latched request is resent only while its latch is sure to answer") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::waiter);
  const TimePoint deadline = t0 + Millis(60'000);
  auto history = after({RedisErrorKind::timeout}, true);
  REQUIRE(history.first_sent == t0);
  // window 12s, span 6s: a resend may start until 6s after the first send
  CHECK(policy.decide(RedisErrorKind::timeout, history, t0 + Millis(6000), deadline).action ==
        Action::resend_now);
  CHECK(policy.decide(RedisErrorKind::timeout, history, t0 + Millis(6001), deadline).action ==
        Action::give_up);
  history.failed(RedisErrorKind::connect, t0 + Millis(3000));
  CHECK(policy.decide(RedisErrorKind::connect, history, t0 + Millis(7000), deadline).action ==
        Action::give_up);
  // Connect failures alone (nothing ever sent) are not bound by the latch.
  history = after({RedisErrorKind::connect, RedisErrorKind::connect}, true, Millis(5000));
  history.reached = true;
  CHECK(policy.decide(RedisErrorKind::connect, history, t0 + Millis(40'000), deadline).action ==
        Action::resend_after_pause);
  // A one-shot resend always fits: the first failure ends within one span.
  RetryPolicy one_shot(k_timeouts, RetryPolicy::Mode::one_shot);
  history = after({RedisErrorKind::timeout}, true);
  CHECK(
      one_shot.decide(RedisErrorKind::timeout, history, t0 + one_shot.request_span(), std::nullopt).action ==
      Action::resend_now);
}

TEST_CASE("retry: pauses and the renewal backoff double up to their caps") {
  CHECK(RetryPolicy::pause_after(0) == Millis(100));
  CHECK(RetryPolicy::pause_after(1) == Millis(100));
  CHECK(RetryPolicy::pause_after(2) == Millis(200));
  CHECK(RetryPolicy::pause_after(4) == Millis(800));
  CHECK(RetryPolicy::pause_after(5) == Millis(1000));
  CHECK(RetryPolicy::pause_after(1000) == Millis(1000));
  CHECK(RetryPolicy::renewal_backoff(1, Millis(10'000)) == Millis(100));
  CHECK(RetryPolicy::renewal_backoff(3, Millis(10'000)) == Millis(400));
  CHECK(RetryPolicy::renewal_backoff(50, Millis(10'000)) == Millis(5000));
  CHECK(RetryPolicy::renewal_backoff(50, Millis(150)) == Millis(100)); // never below 100ms
}

TEST_CASE("retry: send_with_retries resends the same request as decided, and says when it may be applied") {
  rlock::redis::RetryScope scope{RetryPolicy(k_timeouts, RetryPolicy::Mode::one_shot), true, std::nullopt,
                                 [](TimePoint) {}};
  int sends = 0;
  auto reply = rlock::redis::send_with_retries(scope, [&] {
    if (++sends == 1) {
      throw RedisError(RedisErrorKind::closed, "connection closed by the server");
    }
    rlock::redis::Reply ok;
    ok.type = rlock::redis::Reply::Type::integer;
    ok.integer = 7;
    return ok;
  });
  CHECK(sends == 2);
  CHECK(reply.integer == 7);

  sends = 0;
  CHECK_THROWS_AS(rlock::redis::send_with_retries(scope,
                                                  [&]() -> rlock::redis::Reply {
                                                    ++sends;
                                                    throw RedisError(RedisErrorKind::connect, "refused");
                                                  }),
                  RedisError);
  CHECK(sends == 1);

  // Unanswered, then the resend cannot connect: the error says the first may be applied.
  sends = 0;
  try {
    rlock::redis::send_with_retries(scope, [&]() -> rlock::redis::Reply {
      ++sends;
      throw RedisError(sends == 1 ? RedisErrorKind::timeout : RedisErrorKind::connect, "x");
    });
    FAIL("no error");
  } catch (const RedisError& e) {
    CHECK(sends == 2);
    CHECK(e.kind() == RedisErrorKind::timeout);
    CHECK(std::string(e.what()).find("may still be applied") != std::string::npos);
  }
}

TEST_CASE("retry: the renewal thread's requests are never resent here (its own loop retries)") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::renewal);
  for (auto kind : {RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::connect,
                    RedisErrorKind::loading}) {
    CHECK(policy.decide(kind, after({kind}, false), t0, t0 + Millis(60'000)).action == Action::give_up);
  }
}

TEST_CASE("retry: once (run's release after a lost lease) is one try, never resent") {
  RetryPolicy policy(k_timeouts, RetryPolicy::Mode::once);
  for (auto kind : {RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io, RedisErrorKind::connect,
                    RedisErrorKind::loading, RedisErrorKind::busy}) {
    CHECK(policy.decide(kind, after({kind}, true), t0, std::nullopt).action == Action::give_up);
  }
  // One try (connect, HELLO, the request: C + 2T) ends within the budget.
  CHECK(RetryPolicy::timeout_cap_within(Millis(375)) == Millis(125));
  CHECK(RetryPolicy::timeout_cap_within(Millis(1)) == Millis(1));
  // The renewal thread's requests never wait longer than an interval (TTL/3).
  CHECK(RetryPolicy::renewal_timeout_cap(Millis(500)) == Millis(500));
}
