#include <rlock/run/tree.hpp>
#include <rlock/run/watchdog.hpp>

#include <doctest/doctest.h>

#include <sys/wait.h>

using rlock::Millis;
using rlock::TimePoint;

TEST_CASE("lease clock: deadlines count from when the last confirmed renewal was sent") {
  TimePoint t0{};
  rlock::run::LeaseClock clock(Millis(30'000), Millis(10'000), t0);
  CHECK(clock.interval() == Millis(10'000));
  CHECK(clock.margin() == Millis(2'000));
  CHECK(clock.grace() == Millis(7'500));
  CHECK(clock.kill_at() == t0 + Millis(28'000));
  CHECK(clock.stop_at() == t0 + Millis(20'500));

  clock.confirmed(t0 + Millis(10'000), t0 + Millis(10'400)); // sent at 10s, answered at 10.4s
  CHECK(clock.kill_at() == t0 + Millis(38'000));
  clock.confirmed(t0 + Millis(5'000), t0 + Millis(10'500)); // an older send never moves it back
  CHECK(clock.kill_at() == t0 + Millis(38'000));
}

TEST_CASE("lease clock: a confirmation arriving after the kill deadline is ignored") {
  TimePoint t0{};
  rlock::run::LeaseClock clock(Millis(1'500), Millis(10'000), t0);
  CHECK(clock.interval() == Millis(500));
  CHECK(clock.kill_at() == t0 + Millis(1'350));
  CHECK(clock.stop_at() == t0 + Millis(975));
  clock.confirmed(t0 + Millis(1'000), t0 + Millis(1'400)); // too late: stays lost
  CHECK(clock.kill_at() == t0 + Millis(1'350));
}

TEST_CASE("child exit statuses map as flock does") {
  CHECK(rlock::run::exit_status_of(0) == 0);
  CHECK(rlock::run::exit_status_of(7 << 8) == 7);
  CHECK(rlock::run::exit_status_of(SIGKILL) == 137);
  CHECK(rlock::run::exit_status_of(SIGTERM) == 143);
}
