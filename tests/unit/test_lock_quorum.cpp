#include <rlock/lock/quorum.hpp>
#include <rlock/lock/redlock.hpp>

#include <doctest/doctest.h>

using namespace rlock;
using namespace rlock::lock;
using Kind = AcquireVerdict::Kind;

namespace {
Tally t(int yes, int no, int unreachable) {
  return Tally{yes, no, unreachable};
}
} // namespace

TEST_CASE("quorum: a majority is floor(N/2)+1") {
  CHECK(majority(1) == 1);
  CHECK(majority(2) == 2);
  CHECK(majority(3) == 2);
  CHECK(majority(4) == 3);
  CHECK(majority(5) == 3);
}

TEST_CASE("quorum: the drift allowance is 1% of the TTL + 2 ms") {
  CHECK(drift_allowance(Millis(30'000)) == Millis(302));
  CHECK(drift_allowance(Millis(1'000)) == Millis(12));
}

TEST_CASE("quorum: acquisition verdicts") {
  const Millis ttl{10'000};
  // all granted fast: held, validity = TTL - elapsed - drift
  auto v = judge_acquire(t(3, 0, 0), ttl, Millis(20));
  CHECK(v.kind == Kind::held);
  CHECK(v.validity == Millis(10'000 - 20 - 102));
  // one of 3 down, two of 5 down: still held
  CHECK(judge_acquire(t(2, 0, 1), ttl, Millis(5)).kind == Kind::held);
  CHECK(judge_acquire(t(3, 0, 2), ttl, Millis(5)).kind == Kind::held);
  // a majority down: unavailable (69), not busy
  CHECK(judge_acquire(t(1, 0, 2), ttl, Millis(5)).kind == Kind::unavailable);
  // others hold a majority: busy (75)
  CHECK(judge_acquire(t(1, 2, 0), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(0, 3, 0), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(2, 3, 0), ttl, Millis(5)).kind == Kind::busy);
  // a stale lock on one minority node does not stop a majority
  CHECK(judge_acquire(t(2, 1, 0), ttl, Millis(5)).kind == Kind::held);
  // granted, but the answers came too late: no validity left
  auto late = judge_acquire(t(3, 0, 0), ttl, Millis(9'900));
  CHECK(late.kind == Kind::unavailable);
  CHECK(late.validity <= Millis(0));
  CHECK(judge_acquire(t(3, 0, 0), ttl, Millis(9'897)).kind == Kind::held); // 1 ms left
}

TEST_CASE("quorum: one busy master makes a round that is not held busy, never unavailable") {
  const Millis ttl{10'000};
  // issue 19: busy from A, a timeout from B (paused), refused from D (down).
  // The holder may have A and B: calling it "no quorum" (69) let
  // `--if-unavailable run` run CMD beside the holder.
  CHECK(judge_acquire(t(0, 1, 2), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(1, 1, 1), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(2, 2, 1), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(0, 1, 4), ttl, Millis(5)).kind == Kind::busy);
  CHECK(judge_acquire(t(1, 1, 3), ttl, Millis(5)).kind == Kind::busy);
  // nobody said busy: unavailable
  CHECK(judge_acquire(t(0, 0, 3), ttl, Millis(5)).kind == Kind::unavailable);
  CHECK(judge_acquire(t(2, 0, 3), ttl, Millis(5)).kind == Kind::unavailable);
  // held by a majority: a busy minority does not matter
  CHECK(judge_acquire(t(3, 1, 1), ttl, Millis(5)).kind == Kind::held);
  // granted by a majority but too late: unavailable (the grant was ours)
  CHECK(judge_acquire(t(2, 1, 0), ttl, Millis(9'990)).kind == Kind::unavailable);
}

TEST_CASE(
    "quorum: a failed round is undone where it may have taken a share, never waiting on a frozen master") {
  using K = RedisErrorKind;
  CHECK(undo_on(true, std::nullopt) == Undo::release);  // granted
  CHECK(undo_on(false, std::nullopt) == Undo::skip);    // answered busy: took nothing
  CHECK(undo_on(false, K::connect) == Undo::skip);      // nothing was sent
  CHECK(undo_on(false, K::timeout) == Undo::send_only); // frozen or slow: sent, its answer not awaited
  CHECK(undo_on(false, K::closed) == Undo::release);    // broke mid-request: may be applied, answers at once
  CHECK(undo_on(false, K::io) == Undo::release);
  CHECK(undo_on(false, K::server) == Undo::release); // an error reply: cheap to ask again
  CHECK(k_undo_wait <= Millis(100));                 // what a failure may add to one round
}

TEST_CASE("quorum: a release undoes a level only where the acquisition is known to have put it") {
  // answered: granted (the level is there) or busy (nothing of ours: the
  // owner-checked release changes nothing)
  CHECK(level_release(true, false) == LevelRelease::plain);
  CHECK(level_release(true, true) == LevelRelease::plain);
  // the answer was lost: a token of this process's own is nobody else's
  CHECK(level_release(false, true) == LevelRelease::plain);
  // a given token (a re-entry): the level there may be the outer hold's; only
  // the acquisition's latch may say it was applied
  CHECK(level_release(false, false) == LevelRelease::if_applied);
}

TEST_CASE("quorum: renewal verdicts") {
  CHECK(judge_renew(t(2, 1, 0)) == RenewVerdict::confirmed);
  CHECK(judge_renew(t(2, 0, 1)) == RenewVerdict::confirmed);
  CHECK(judge_renew(t(1, 0, 2)) == RenewVerdict::unconfirmed); // masters unreachable: the deadline decides
  CHECK(judge_renew(t(1, 2, 0)) == RenewVerdict::lost);        // gone on a majority
  CHECK(judge_renew(t(1, 1, 1)) == RenewVerdict::unconfirmed);
  CHECK(judge_renew(t(2, 3, 0)) == RenewVerdict::lost);
  CHECK(judge_renew(t(3, 2, 0)) == RenewVerdict::confirmed);
}

TEST_CASE("quorum: release verdicts") {
  CHECK(judge_release(t(3, 0, 0), true) == ReleaseVerdict::released);
  CHECK(judge_release(t(2, 0, 1), true) == ReleaseVerdict::released);
  CHECK(judge_release(t(2, 0, 1), false) == ReleaseVerdict::not_held);
  CHECK(judge_release(t(1, 0, 2), true) == ReleaseVerdict::unavailable);
}

TEST_CASE("quorum: per-node timeouts stay well below the lease") {
  redis::Timeouts given{Millis(2000), Millis(2000)};
  auto short_lease = per_node_timeouts(given, Millis(3000));
  CHECK(short_lease.connect == Millis(300));
  CHECK(short_lease.io == Millis(300));
  auto long_lease = per_node_timeouts(given, Millis(60'000));
  CHECK(long_lease.io == Millis(2000));                          // never above what was given
  CHECK(per_node_timeouts(given, Millis(100)).io == Millis(50)); // at least 50 ms
}
