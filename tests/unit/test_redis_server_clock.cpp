// The server's clock as rlock knows it, and the deadlines made from it (issue 34).
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/server_clock.hpp>

#include <doctest/doctest.h>

#include <string>

using rlock::Clock;
using rlock::Millis;
using rlock::RedisError;
using rlock::RedisErrorKind;
using rlock::TimePoint;
using rlock::redis::ServerClock;

namespace {
const TimePoint t0{std::chrono::hours(1000)};
constexpr long long k_server = 1'700'000'000'000; // the server's TIME at the sample

ServerClock sampled(Millis sent, Millis rtt, long long server_ms = k_server) {
  ServerClock clock;
  clock.take({t0 + sent, t0 + sent + rtt, server_ms});
  return clock;
}
} // namespace

TEST_CASE("server clock: bounds from one sample, widening with the drift allowance") {
  auto clock = sampled(Millis(0), Millis(2));
  // TIME ran between t0 and t0+2ms: right after, the server reads k_server ..
  // k_server+3, and 1 ms of drift allowance (rounded up).
  CHECK(clock.earliest_at(t0 + Millis(2)) == k_server);
  CHECK(clock.latest_at(t0 + Millis(2)) == k_server + 4);
  // 10 s later: 10 ms of drift each way (1000 ppm).
  CHECK(clock.earliest_at(t0 + Millis(10'002)) == k_server + 10'000 - 10);
  CHECK(clock.latest_at(t0 + Millis(10'002)) == k_server + 1 + 10'002 + 11);
}

TEST_CASE("server clock: a request the server runs while rlock waits is never refused, one run after it "
          "has settled always is") {
  for (long long rtt : {0, 1, 5, 40}) {
    for (long long age : {0, 100, 2'000, 60'000}) {
      auto clock = sampled(Millis(0), Millis(rtt));
      TimePoint sent = t0 + Millis(rtt + age);
      TimePoint until = sent + Millis(2000);
      long long deadline = clock.deadline_for(until, 0);
      CAPTURE(rtt);
      CAPTURE(age);
      // The true server clock is somewhere in the bounds; at `until` at most latest_at.
      CHECK(clock.latest_at(until) <= deadline);
      CHECK(clock.latest_at(sent) <= deadline);
      auto settled = clock.settled_after(deadline);
      REQUIRE(settled.has_value());
      CHECK(*settled >= until);
      // Past `settled`, even the slowest possible server clock is past the deadline.
      CHECK(clock.earliest_at(*settled) > deadline);
      CHECK(clock.earliest_at(*settled + Millis(1)) > deadline);
      // The gap between "stopped waiting" and "settled" is the round trip and the drift.
      auto gap = std::chrono::duration_cast<Millis>(*settled - until).count();
      CHECK(gap <= rtt + 4 + 2 * (age + 2000 + rtt) / 1000 + 2);
    }
  }
}

TEST_CASE("server clock: without a sample the wall clock plus a margin, and no settling bound") {
  ServerClock clock;
  CHECK_FALSE(clock.known());
  CHECK(clock.wants_sample(t0));
  CHECK(clock.deadline_for(t0, 5'000) == 5'000 + ServerClock::k_unsynced_margin.count());
  CHECK_FALSE(clock.settled_after(123).has_value());
}

TEST_CASE("server clock: the narrower sample is kept; a stepped server clock replaces it") {
  auto clock = sampled(Millis(0), Millis(20));
  // A narrower one, consistent: taken.
  clock.take({t0 + Millis(100), t0 + Millis(101), k_server + 110});
  CHECK(clock.latest_at(t0 + Millis(101)) - clock.earliest_at(t0 + Millis(101)) <= 3);
  // A wider one, consistent: the narrow one stays.
  clock.take({t0 + Millis(200), t0 + Millis(260), k_server + 230});
  CHECK(clock.latest_at(t0 + Millis(260)) - clock.earliest_at(t0 + Millis(260)) <= 5);
  // The server's clock jumped an hour ahead: believed at once, however wide.
  clock.take({t0 + Millis(300), t0 + Millis(400), k_server + 3'600'000});
  CHECK(clock.earliest_at(t0 + Millis(400)) == k_server + 3'600'000);
  // And back.
  clock.take({t0 + Millis(500), t0 + Millis(501), k_server + 500});
  CHECK(clock.latest_at(t0 + Millis(501)) <= k_server + 504);
}

TEST_CASE("server clock: a sample older than the refresh asks for another") {
  auto clock = sampled(Millis(0), Millis(1));
  CHECK_FALSE(clock.wants_sample(t0 + Millis(1) + ServerClock::k_refresh));
  CHECK(clock.wants_sample(t0 + Millis(2) + ServerClock::k_refresh));
}

TEST_CASE("server clock: LATE is a refusal that changed nothing: resending is safe, and unavailable") {
  auto e = rlock::error_from_reply("LATE rlock: ran at server time 1700000000123, after its deadline 1700000000100: "
                                   "nothing changed");
  CHECK(e.kind() == RedisErrorKind::late);
  CHECK(rlock::redis::outcome_of(RedisErrorKind::late) == rlock::redis::Outcome::not_applied);
  CHECK(rlock::unavailable_kind(RedisErrorKind::late));
}

TEST_CASE("server clock: send_with_retries gives up on an unanswered request only once it has settled") {
  rlock::redis::RetryScope scope{
      rlock::redis::RetryPolicy({Millis(2000), Millis(2000)}, rlock::redis::RetryPolicy::Mode::one_shot), false,
      std::nullopt, {}};
  TimePoint settles = Clock::now() + Millis(60);
  int sends = 0;
  try {
    rlock::redis::send_with_retries(scope, [&]() -> rlock::redis::Reply {
      ++sends;
      RedisError e(sends == 1 ? RedisErrorKind::timeout : RedisErrorKind::connect, "x");
      if (sends == 1) {
        e.set_settles_at(settles);
      }
      throw e;
    });
    FAIL("no error");
  } catch (const RedisError& e) {
    CHECK(Clock::now() >= settles);
    CHECK(e.kind() == RedisErrorKind::timeout);
    CHECK(std::string(e.what()).find("never after") != std::string::npos);
  }
}
