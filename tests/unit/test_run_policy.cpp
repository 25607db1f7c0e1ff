#include <rlock/run/policy.hpp>

#include <doctest/doctest.h>

#include <csignal>

using rlock::Millis;
using rlock::TimePoint;
using rlock::run::LeaseView;
using rlock::run::OnLost;
using rlock::run::StopPlan;
using Why = StopPlan::Why;

namespace {

constexpr TimePoint t0{};
TimePoint at(long long ms) {
  return t0 + Millis(ms);
}

// A 30s lease confirmed at t0: stop by 24.5s, dead by 27s (as LeaseClock says).
LeaseView lease(bool lost = false) {
  return {at(24'500), at(27'000), lost};
}

StopPlan::Config config(OnLost on_lost = OnLost::term) {
  StopPlan::Config c;
  c.on_lost = on_lost;
  c.kill_after = Millis(10'000);
  c.first_renewal = at(10'000);
  return c;
}

} // namespace

TEST_CASE("stop plan: a command that ends with its tree finishes the run") {
  StopPlan plan(config());
  auto step = plan.step(at(5), lease(), false, false, false);
  CHECK(!step.finished);
  CHECK(step.signal == 0);
  CHECK(!step.start_renewals);
  CHECK(step.wake == at(10'000)); // the first renewal is the next thing due
  step = plan.step(at(10'000), lease(), false, false, false);
  CHECK(step.start_renewals);
  CHECK(step.wake == at(24'500)); // then the lease's stop time
  step = plan.step(at(12'000), lease(), true, true, true);
  CHECK(step.finished);
  CHECK(plan.exit_status(3) == 3);
}

TEST_CASE("stop plan: a lost lock stops the tree, SIGTERM then SIGKILL, and exits 76") {
  StopPlan plan(config());
  auto step = plan.step(at(11'000), lease(true), true, false, false);
  CHECK(step.signal == SIGTERM);
  CHECK(step.why == Why::lost);
  CHECK(step.wake == at(21'000)); // --kill-after 10s
  step = plan.step(at(15'000), lease(true), true, false, false);
  CHECK(step.signal == 0); // said once
  CHECK(step.why == Why::none);
  step = plan.step(at(21'000), lease(true), true, false, false);
  CHECK(step.signal == SIGKILL);
  CHECK(step.wake == at(21'100)); // looked at again until the tree is gone
  step = plan.step(at(21'100), lease(true), true, false, false);
  CHECK(step.signal == SIGKILL);
  step = plan.step(at(21'150), lease(true), true, true, true);
  CHECK(step.finished);
  CHECK(plan.exit_status(143) == 76);
  CHECK(!plan.hold_for(at(21'150)));
}

TEST_CASE("stop plan: an unconfirmed lease stops CMD before the server could expire it") {
  StopPlan plan(config());
  auto step = plan.step(at(24'500), lease(), true, false, false);
  CHECK(step.signal == SIGTERM);
  CHECK(step.why == Why::unconfirmed);
  CHECK(step.wake == at(27'000)); // the lease's kill time, not 10s later
  step = plan.step(at(27'000), lease(), true, false, false);
  CHECK(step.signal == SIGKILL);
  CHECK(plan.exit_status(0) == 76);
}

TEST_CASE("stop plan: woken past the kill time (rlock was paused), SIGKILL at once") {
  StopPlan plan(config());
  auto step = plan.step(at(40'000), lease(), true, false, false);
  CHECK(step.signal == SIGKILL);
  CHECK(step.why == Why::unconfirmed);
}

TEST_CASE("stop plan: --on-lost kill and ignore") {
  StopPlan kill(config(OnLost::kill));
  auto step = kill.step(at(11'000), lease(true), true, false, false);
  CHECK(step.signal == SIGKILL);
  CHECK(kill.exit_status(137) == 76);

  StopPlan ignore(config(OnLost::ignore));
  step = ignore.step(at(11'000), lease(true), true, false, false);
  CHECK(step.signal == 0);
  CHECK(step.loss_ignored == Why::lost);
  step = ignore.step(at(12'000), lease(true), true, false, false);
  CHECK(step.loss_ignored == Why::none); // said once
  step = ignore.step(at(50'000), lease(true), true, true, true);
  CHECK(step.finished);
  CHECK(ignore.exit_status(0) == 0);
}

TEST_CASE("stop plan: --max-hold stops CMD as for a lost lock") {
  auto c = config();
  c.max_hold_at = at(5'000);
  c.hold_until = at(60'000);
  StopPlan plan(c);
  auto step = plan.step(at(1'000), lease(), false, false, false);
  CHECK(step.wake == at(5'000));
  step = plan.step(at(5'000), lease(), false, false, false);
  CHECK(step.signal == SIGTERM);
  CHECK(step.why == Why::max_hold);
  CHECK(plan.exit_status(0) == 76);
  CHECK(!plan.hold_for(at(6'000))); // no --hold-min after --max-hold
}

TEST_CASE("stop plan: what CMD leaves running is stopped before the release") {
  StopPlan plan(config());
  auto step = plan.step(at(2'000), lease(), false, true, false);
  CHECK(!step.finished);
  CHECK(step.signal == SIGTERM);
  CHECK(step.why == Why::leftovers);
  CHECK(step.wake == at(10'000)); // the renewal start comes before the SIGKILL at 12s
  step = plan.step(at(10'000), lease(), false, true, false);
  CHECK(step.start_renewals);
  step = plan.step(at(12'000), lease(), true, true, false);
  CHECK(step.signal == SIGKILL);
  step = plan.step(at(12'050), lease(), true, true, true);
  CHECK(step.finished);
  CHECK(plan.exit_status(4) == 4); // CMD's status: the lock was never lost
}

TEST_CASE("stop plan: a loss while stopping leftovers tightens the kill time") {
  StopPlan plan(config());
  plan.step(at(20'000), lease(), true, true, false); // leftovers: SIGKILL due at 30s
  auto step = plan.step(at(24'500), lease(), true, true, false);
  CHECK(step.why == Why::unconfirmed);
  CHECK(step.wake == at(27'000));
  CHECK(plan.exit_status(0) == 76);
}

TEST_CASE("stop plan: --wait-descendants holds until the tree is gone") {
  auto c = config();
  c.wait_descendants = true;
  StopPlan plan(c);
  auto step = plan.step(at(2'000), lease(), false, true, false);
  CHECK(step.signal == 0);
  CHECK(!step.finished);
  step = plan.step(at(10'000), lease(), false, true, false);
  CHECK(step.start_renewals); // keeps renewing meanwhile
  step = plan.step(at(11'000), lease(true), true, true, false);
  CHECK(step.signal == SIGTERM); // a loss still stops them
  CHECK(step.why == Why::lost);
}

TEST_CASE("stop plan: --hold-min keeps the lock for what is left of it") {
  auto c = config();
  c.hold_until = at(60'000);
  StopPlan plan(c);
  CHECK(plan.step(at(1'000), lease(), false, true, true).finished);
  CHECK(plan.hold_for(at(1'000)) == Millis(59'000));
  CHECK(!plan.hold_for(at(60'000)));
  CHECK(!StopPlan(config()).hold_for(at(1'000)));
}

TEST_CASE("stop plan: the rlock process above the supervisor was killed") {
  StopPlan plan(config());
  plan.orphaned();
  auto step = plan.step(at(1'000), lease(), false, false, false);
  CHECK(step.signal == SIGKILL);
  CHECK(step.why == Why::orphaned);
  CHECK(plan.step(at(1'050), lease(), false, true, true).finished);
  CHECK(plan.exit_status(0) == 128 + SIGKILL);

  // The guardian's loss seen in the same turn as the end of CMD's tree (its
  // keeper's death killed CMD): nothing to stop, and still said, once.
  StopPlan late(config());
  late.orphaned();
  step = late.step(at(1'000), lease(), false, true, true);
  CHECK(step.finished);
  CHECK(step.signal == 0);
  CHECK(step.why == Why::orphaned);
  CHECK(late.step(at(1'050), lease(), false, true, true).why == Why::none);
  CHECK(late.exit_status(0) == 128 + SIGKILL);

  auto c = config(OnLost::ignore);
  c.hold_until = at(60'000);
  StopPlan ignore(c);
  ignore.orphaned();
  step = ignore.step(at(1'000), lease(), false, false, false);
  CHECK(step.finished); // CMD goes on; the run ends and releases
  CHECK(step.signal == 0);
  CHECK(!ignore.hold_for(at(1'000)));
}

TEST_CASE("stop plan: after a loss, at most one release, bounded by what is left of the lease") {
  // Not lost: the usual release, whatever the time.
  StopPlan fine(config());
  fine.step(at(5), lease(), false, true, true);
  CHECK(fine.release(at(5), lease()).send);
  CHECK(!fine.release(at(5), lease()).within);
  CHECK(!fine.release(at(40'000), lease()).within);

  // TTL 1.5s in a silent partition (LeaseClock: margin 150ms, grace 375ms):
  // last renewal confirmed at t0: stop at 975ms, kill at 1350ms.
  const LeaseView frozen{at(975), at(1'350), false};
  // CMD obeys SIGTERM at once: one try, within what is left until 1350ms.
  StopPlan quick(config());
  auto step = quick.step(at(975), frozen, true, false, false);
  CHECK(step.signal == SIGTERM);
  CHECK(step.why == Why::unconfirmed);
  auto release = quick.release(at(1'000), frozen);
  CHECK(release.send);
  REQUIRE(release.within);
  CHECK(*release.within == Millis(350));
  // CMD ignored SIGTERM and was killed at 1350ms: the lease may be over, no release.
  StopPlan late(config());
  late.step(at(975), frozen, true, false, false);
  late.step(at(1'350), frozen, true, false, false);
  CHECK(!late.release(at(1'350), frozen).send);
  CHECK(!late.release(at(5'000), frozen).send);
  // Found gone or another's (the server answered): the same bound.
  StopPlan gone(config());
  gone.step(at(300), {at(975), at(1'350), true}, true, false, false);
  CHECK(*gone.release(at(400), {at(975), at(1'350), true}).within == Millis(950));
  // --on-lost ignore: CMD went on unprotected; the lease is still not ours.
  StopPlan ignored(config(OnLost::ignore));
  ignored.step(at(975), frozen, true, false, false);
  CHECK(!ignored.release(at(9'000), frozen).send);
}
