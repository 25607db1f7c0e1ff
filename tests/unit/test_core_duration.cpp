#include <rlock/core/duration.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <string>

using rlock::Millis;
using rlock::parse_duration;

TEST_CASE("durations: the forms the contract lists") {
  CHECK(parse_duration("500ms", "--ttl") == Millis(500));
  CHECK(parse_duration("30s", "--ttl") == Millis(30'000));
  CHECK(parse_duration("5m", "--ttl") == Millis(300'000));
  CHECK(parse_duration("2h", "--ttl") == Millis(7'200'000));
  CHECK(parse_duration("1h30m", "--ttl") == Millis(5'400'000));
  CHECK(parse_duration("1d", "--ttl") == Millis(86'400'000));
  CHECK(parse_duration("0.5", "--ttl") == Millis(500));
  CHECK(parse_duration("30", "--ttl") == Millis(30'000));
  CHECK(parse_duration("1.5s", "--ttl") == Millis(1500));
  CHECK(parse_duration("365d", "--ttl") == Millis(31'536'000'000LL));
}

TEST_CASE("durations: bad values are usage errors naming the flag and the value") {
  for (const char* bad : {"", "0", "0s", "-1", "-5s", "abc", "1x", "1h30", "s", ".", "1..2", "366d", "1e3",
                          "0.0001", " 1s", "1s "}) {
    CAPTURE(bad);
    try {
      parse_duration(bad, "--wait");
      FAIL("accepted");
    } catch (const rlock::UsageError& e) {
      CHECK(e.outcome() == rlock::Outcome::usage);
      CHECK(std::string(e.what()).find("--wait") != std::string::npos);
    }
  }
}

TEST_CASE("durations: human format") {
  CHECK(rlock::format_duration(Millis(850)) == "850ms");
  CHECK(rlock::format_duration(Millis(29'500)) == "29.5s");
  CHECK(rlock::format_duration(Millis(30'000)) == "30s");
  CHECK(rlock::format_duration(Millis(250'000)) == "4m10s");
  CHECK(rlock::format_duration(Millis(7'500'000)) == "2h5m");
  CHECK(rlock::format_duration(Millis(86'400'000LL * 3 + 3'600'000 * 4)) == "3d4h");
}

// Issue 43: -v lines carry a short local time, "12:03:04.123".
TEST_CASE("debug_stamp: a -v line's local time, to the millisecond") {
  const char* old = std::getenv("TZ");
  const std::string saved = old != nullptr ? old : "";
  setenv("TZ", "UTC", 1);
  tzset();
  CHECK(rlock::log::debug_stamp(1'700'000'000'123) == "22:13:20.123");
  CHECK(rlock::log::debug_stamp(1'700'000'000'007) == "22:13:20.007");
  setenv("TZ", "XXX-1", 1); // POSIX TZ: one hour east of UTC, no zoneinfo needed
  tzset();
  CHECK(rlock::log::debug_stamp(1'700'000'000'123) == "23:13:20.123");
  if (old != nullptr) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}
