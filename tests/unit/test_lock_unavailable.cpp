#include <rlock/lock/lock.hpp>
#include <rlock/redis/errors.hpp>

#include <doctest/doctest.h>

using rlock::ExitCode;
using rlock::RedisErrorKind;
using rlock::lock::acquisition_unavailable;

// Issue 19, defect 2: `run --if-unavailable` decides from the error's kind,
// never from an exit code (-E may make busy 69).
TEST_CASE("acquisition_unavailable: what could not reach Redis, and nothing else") {
  for (auto kind :
       {RedisErrorKind::connect, RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io,
        RedisErrorKind::loading, RedisErrorKind::busy, RedisErrorKind::readonly, RedisErrorKind::tryagain,
        RedisErrorKind::unsynced, RedisErrorKind::quorum}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(acquisition_unavailable(kind));
  }
  for (auto kind :
       {RedisErrorKind::protocol, RedisErrorKind::auth, RedisErrorKind::noscript, RedisErrorKind::moved,
        RedisErrorKind::ask, RedisErrorKind::oom, RedisErrorKind::damaged, RedisErrorKind::server}) {
    CAPTURE(static_cast<int>(kind));
    CHECK_FALSE(acquisition_unavailable(kind));
  }
}

TEST_CASE("acquisition_unavailable agrees with the documented exit code 69 for every kind") {
  for (int k = 0; k <= static_cast<int>(RedisErrorKind::damaged); ++k) {
    auto kind = static_cast<RedisErrorKind>(k);
    CAPTURE(k);
    CHECK(acquisition_unavailable(kind) == (rlock::outcome_for(kind) == rlock::Outcome::unavailable));
  }
}
