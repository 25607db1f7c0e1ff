#include <rlock/lock/waiter.hpp>

#include <doctest/doctest.h>

using rlock::Millis;
using rlock::TimePoint;
using rlock::lock::WaitPlan;
using Step = WaitPlan::Step;

namespace {
const TimePoint t0{};
}

TEST_CASE("waiter: without a wait, one attempt and then give up") {
  WaitPlan plan(std::nullopt, t0);
  CHECK(plan.next(t0).step == Step::attempt);
  plan.busy(Millis(5000), t0 + Millis(1));
  CHECK(plan.next(t0 + Millis(1)).step == Step::give_up);
  WaitPlan zero(Millis(0), t0); // -w 0 tries once, as flock does
  CHECK(zero.next(t0).step == Step::attempt);
  zero.busy(Millis(5000), t0 + Millis(1));
  CHECK(zero.next(t0 + Millis(1)).step == Step::give_up);
}

TEST_CASE("waiter: busy, subscribe, attempt again, then wait for the holder's lease end") {
  WaitPlan plan(Millis(10'000), t0);
  CHECK(plan.deadline() == t0 + Millis(10'000));
  plan.busy(Millis(3000), t0 + Millis(2));
  CHECK(plan.next(t0 + Millis(2)).step == Step::subscribe);
  plan.subscribed();
  CHECK(plan.next(t0 + Millis(3)).step == Step::attempt); // closes the race with a release before SUBSCRIBE
  plan.busy(Millis(2990), t0 + Millis(10));
  auto next = plan.next(t0 + Millis(10));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(3001)); // lease end + 1ms
  CHECK(plan.next(t0 + Millis(2000)).step == Step::wait);
  CHECK(plan.next(t0 + Millis(3001)).step == Step::attempt); // no message came: look at the lease end
}

TEST_CASE("waiter: a release message means attempt now") {
  WaitPlan plan(Millis(10'000), t0);
  plan.busy(Millis(60'000), t0);
  plan.subscribed();
  plan.busy(Millis(60'000), t0 + Millis(1));
  CHECK(plan.next(t0 + Millis(500)).until == t0 + Millis(10'000)); // the lease outlasts the wait
  plan.released();
  CHECK(plan.next(t0 + Millis(500)).step == Step::attempt);
  plan.busy(Millis(100), t0 + Millis(501)); // taken by someone else meanwhile
  CHECK(plan.next(t0 + Millis(501)).until == t0 + Millis(602));
}

TEST_CASE("waiter: one last look at the deadline, then give up") {
  WaitPlan plan(Millis(1000), t0);
  plan.busy(Millis(60'000), t0);
  plan.subscribed();
  plan.busy(Millis(60'000), t0 + Millis(5));
  auto next = plan.next(t0 + Millis(5));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(1000));
  CHECK(plan.next(t0 + Millis(1000)).step == Step::attempt);
  plan.busy(Millis(59'000), t0 + Millis(1001));
  CHECK(plan.next(t0 + Millis(1001)).step == Step::give_up);
}

TEST_CASE("waiter: a holder without a lease is looked at again every second") {
  WaitPlan plan(Millis(10'000), t0);
  plan.busy(Millis(-1), t0);
  plan.subscribed();
  plan.busy(Millis(-1), t0);
  CHECK(plan.next(t0).until == t0 + Millis(1000));
}

TEST_CASE("waiter: a lost subscription is renewed, then an attempt closes the gap") {
  WaitPlan plan(Millis(10'000), t0);
  plan.busy(Millis(5000), t0);
  plan.subscribed();
  plan.busy(Millis(5000), t0);
  plan.subscription_lost();
  CHECK(plan.next(t0 + Millis(100)).step == Step::subscribe);
  plan.subscribed();
  CHECK(plan.next(t0 + Millis(101)).step == Step::attempt);
}

TEST_CASE("waiter: a failed SUBSCRIBE is tried again when told, and once more at the deadline") {
  WaitPlan plan(Millis(1000), t0);
  plan.busy(Millis(5000), t0);
  CHECK(plan.next(t0).step == Step::subscribe);
  plan.subscribe_failed(t0 + Millis(100));
  auto next = plan.next(t0 + Millis(1));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(100));
  CHECK(plan.next(t0 + Millis(100)).step == Step::subscribe);
  plan.subscribe_failed(t0 + Millis(5000)); // never past the deadline
  CHECK(plan.next(t0 + Millis(200)).until == t0 + Millis(1000));
  CHECK(plan.next(t0 + Millis(1000)).step == Step::subscribe); // its error is then final
  // Without a failure, nothing is subscribed after the deadline.
  WaitPlan late(Millis(1000), t0);
  late.busy(Millis(5000), t0 + Millis(999));
  late.subscribed();
  late.busy(Millis(5000), t0 + Millis(999));
  late.subscription_lost();
  CHECK(late.next(t0 + Millis(1000)).step == Step::give_up);
}

TEST_CASE("waiter: an attempt's retry_after bounds the wait (a fair waiter's refresh, a permit's lease end)") {
  WaitPlan plan(Millis(30'000), t0);
  plan.busy(Millis(20'000), t0, Millis(1'000));
  plan.subscribed();
  CHECK(plan.next(t0).step == Step::attempt);
  plan.busy(Millis(20'000), t0 + Millis(5), Millis(1'000));
  auto next = plan.next(t0 + Millis(5));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(1'005)); // not the holder's lease end 20s away
  plan.busy(Millis(300), t0 + Millis(1'010), Millis(1'000));
  CHECK(plan.next(t0 + Millis(1'010)).until == t0 + Millis(1'311)); // the lease end comes first
  plan.busy(Millis(20'000), t0 + Millis(29'500), Millis(1'000));
  CHECK(plan.next(t0 + Millis(29'500)).until == t0 + Millis(30'000)); // never past the deadline
}

TEST_CASE("waiter: several names keep the ones already held alive while waiting (keep_alive every TTL/3)") {
  // TTL 2s: the held lock was taken at t0 - 100ms, so its renewal is due at
  // t0 + 566ms, then 666ms after each renewal was sent.
  WaitPlan plan(Millis(60'000), t0);
  plan.keep_alive(t0 + Millis(566), Millis(666));
  CHECK(plan.next(t0).step == Step::attempt); // the first attempt comes first
  plan.busy(Millis(34'000), t0 + Millis(2));  // held for 34s by another
  CHECK(plan.next(t0 + Millis(2)).step == Step::subscribe);
  plan.subscribed();
  CHECK(plan.next(t0 + Millis(3)).step == Step::attempt);
  plan.busy(Millis(34'000), t0 + Millis(4));
  auto next = plan.next(t0 + Millis(4));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(566)); // not the holder's lease end 34s away
  CHECK(plan.next(t0 + Millis(566)).step == Step::keep_alive);
  plan.kept_alive(t0 + Millis(567));
  next = plan.next(t0 + Millis(570));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(1'233));
  // Over a long wait the renewals keep coming, one per interval.
  int renewals = 1;
  for (TimePoint now = t0 + Millis(570); now < t0 + Millis(34'000); now += Millis(1)) {
    if (plan.next(now).step == Step::keep_alive) {
      ++renewals;
      plan.kept_alive(now);
    }
  }
  CHECK(renewals == 51); // 34s / 666ms
  // Due together with an attempt (a release message): the renewal first.
  plan.released();
  CHECK(plan.next(t0 + Millis(40'000)).step == Step::keep_alive);
  plan.kept_alive(t0 + Millis(40'000));
  CHECK(plan.next(t0 + Millis(40'000)).step == Step::attempt);
  // A failed SUBSCRIBE's pause does not outlast the renewal either.
  plan.busy(Millis(34'000), t0 + Millis(40'001));
  plan.subscribe_failed(t0 + Millis(42'000));
  CHECK(plan.next(t0 + Millis(40'002)).until == t0 + Millis(40'666));
}

TEST_CASE("waiter: keep_alive never delays giving up") {
  WaitPlan plan(Millis(1'000), t0);
  plan.keep_alive(t0 + Millis(2'000), Millis(666));
  plan.busy(Millis(5'000), t0 + Millis(1'000));
  CHECK(plan.next(t0 + Millis(3'000)).step == Step::give_up);
  WaitPlan once(std::nullopt, t0); // -n: no wait, nothing to keep alive meanwhile
  once.keep_alive(t0, Millis(666));
  once.busy(Millis(5'000), t0);
  CHECK(once.next(t0 + Millis(1)).step == Step::give_up);
}

// ---- several subscriptions: a Redlock quorum's masters -------------------------

TEST_CASE("waiter: a quorum subscribes on every master in turn, then makes one attempt") {
  WaitPlan plan(Millis(10'000), t0, 3, Millis(20));
  CHECK(plan.next(t0).step == Step::attempt);
  plan.busy(Millis(3000), t0 + Millis(1));
  for (std::size_t i = 0; i < 3; ++i) {
    auto next = plan.next(t0 + Millis(2));
    CHECK(next.step == Step::subscribe);
    CHECK(next.index == i);
    plan.subscribed(i);
  }
  CHECK(plan.next(t0 + Millis(3)).step == Step::attempt); // closes the race, once for all
  plan.busy(Millis(2990), t0 + Millis(10));
  auto next = plan.next(t0 + Millis(10));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(3001));
}

TEST_CASE("waiter: a master that cannot be subscribed to is not listened to (best effort)") {
  WaitPlan plan(Millis(10'000), t0, 3, Millis(20));
  plan.busy(Millis(3000), t0);
  plan.subscribed(0);
  plan.not_listened(1);
  plan.subscribed(2);
  CHECK(plan.next(t0 + Millis(1)).step == Step::attempt);
  plan.busy(Millis(3000), t0 + Millis(2));
  CHECK(plan.next(t0 + Millis(3)).until == t0 + Millis(3003)); // never subscribed to again
  // Nobody listened to at all: the holder's lease end still wakes it.
  WaitPlan deaf(Millis(10'000), t0, 2, Millis(20));
  deaf.busy(Millis(500), t0);
  deaf.not_listened(0);
  deaf.not_listened(1);
  auto next = deaf.next(t0);
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(501));
  CHECK(deaf.next(t0 + Millis(501)).step == Step::attempt);
}

TEST_CASE("waiter: a quorum's release starts the round once every master announced it, or 20ms after the first") {
  WaitPlan plan(Millis(10'000), t0, 3, Millis(20));
  plan.busy(Millis(60'000), t0);
  for (std::size_t i = 0; i < 3; ++i) {
    plan.subscribed(i);
  }
  plan.busy(Millis(60'000), t0 + Millis(1));
  plan.released(1, t0 + Millis(100));
  auto next = plan.next(t0 + Millis(100));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(120));
  plan.released(0, t0 + Millis(105));
  CHECK(plan.next(t0 + Millis(105)).step == Step::wait);
  plan.released(2, t0 + Millis(107)); // all three: at once
  CHECK(plan.next(t0 + Millis(107)).step == Step::attempt);
  plan.busy(Millis(60'000), t0 + Millis(108)); // taken by someone else meanwhile
  // One master stays silent: 20ms after the first message.
  plan.released(0, t0 + Millis(200));
  plan.released(2, t0 + Millis(201));
  CHECK(plan.next(t0 + Millis(219)).step == Step::wait);
  CHECK(plan.next(t0 + Millis(220)).step == Step::attempt);
}

TEST_CASE("waiter: a quorum's lost subscription (sunsubscribe, a broken connection) is made again") {
  WaitPlan plan(Millis(10'000), t0, 2, Millis(20));
  plan.busy(Millis(5000), t0);
  plan.subscribed(0);
  plan.subscribed(1);
  plan.busy(Millis(5000), t0 + Millis(1));
  plan.subscription_lost(1);
  auto next = plan.next(t0 + Millis(50));
  CHECK(next.step == Step::subscribe);
  CHECK(next.index == 1);
  plan.subscribed(1);
  CHECK(plan.next(t0 + Millis(51)).step == Step::attempt);
  // A message from the one left listening does not wait for the lost one.
  plan.busy(Millis(5000), t0 + Millis(52));
  plan.subscription_lost(1);
  plan.not_listened(1);
  plan.released(0, t0 + Millis(60));
  CHECK(plan.next(t0 + Millis(60)).step == Step::attempt);
}

TEST_CASE("waiter: a round without a quorum is made again when the caller says, never past the deadline") {
  WaitPlan plan(Millis(1000), t0, 3, Millis(20));
  plan.unanswered(t0 + Millis(10), t0 + Millis(160));
  CHECK(plan.next(t0 + Millis(10)).step == Step::subscribe);
  for (std::size_t i = 0; i < 3; ++i) {
    plan.not_listened(i);
  }
  auto next = plan.next(t0 + Millis(11));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(160));
  CHECK(plan.next(t0 + Millis(160)).step == Step::attempt);
  plan.unanswered(t0 + Millis(900), t0 + Millis(1100));
  CHECK(plan.next(t0 + Millis(901)).until == t0 + Millis(1000));
  CHECK(plan.next(t0 + Millis(1000)).step == Step::attempt); // one last round at the deadline
  plan.unanswered(t0 + Millis(1001), t0 + Millis(1200));
  CHECK(plan.next(t0 + Millis(1001)).step == Step::give_up); // the caller throws its error
  WaitPlan once(std::nullopt, t0, 3, Millis(20)); // -n
  once.unanswered(t0, t0 + Millis(100));
  CHECK(once.next(t0).step == Step::give_up);
}

TEST_CASE("waiter: the jitter is added to the wake-up at the holder's lease end, never past the deadline") {
  WaitPlan plan(Millis(10'000), t0, 2, Millis(20));
  plan.busy(Millis(1000), t0, Millis(0), Millis(37));
  plan.not_listened(0);
  plan.not_listened(1);
  CHECK(plan.next(t0).until == t0 + Millis(1038));
  plan.busy(Millis(-1), t0, Millis(0), Millis(12)); // no lease: a second, plus the jitter
  CHECK(plan.next(t0).until == t0 + Millis(1012));
  plan.busy(Millis(9'990), t0, Millis(0), Millis(40));
  CHECK(plan.next(t0).until == t0 + Millis(10'000));
}

TEST_CASE("waiter: queued for its turn, a release that names another ('00') needs no attempt once it is taken") {
  using rlock::lock::k_turn_deadline;
  WaitPlan plan(Millis(60'000), t0);
  plan.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  CHECK(plan.queued());
  plan.subscribed();
  plan.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  plan.passed_over(0, t0 + Millis(500), Millis(40));
  auto next = plan.next(t0 + Millis(500));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(540) + k_turn_deadline); // the turn's deadline, with the jitter
  plan.taken(); // the named waiter took it: back to the lease end it saw, no sooner
  next = plan.next(t0 + Millis(520));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(30'003));
  plan.released(0, t0 + Millis(700)); // its turn ('0' on its own channel)
  CHECK(plan.next(t0 + Millis(700)).step == Step::attempt);
}

TEST_CASE("waiter: a turn given to another that nobody takes (stopped, dead waiters) ends at its deadline") {
  using rlock::lock::k_turn_deadline;
  using rlock::lock::k_turn_jitter;
  WaitPlan plan(Millis(60'000), t0);
  plan.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  plan.subscribed();
  plan.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  plan.passed_over(0, t0 + Millis(1000), Millis(0));
  CHECK(plan.next(t0 + Millis(1000) + k_turn_deadline - Millis(1)).step == Step::wait);
  CHECK(plan.next(t0 + Millis(1000) + k_turn_deadline).step == Step::attempt);
  // well within a second of the release, whatever the jitter
  CHECK(k_turn_deadline + k_turn_jitter < Millis(800));
  CHECK(rlock::lock::k_turn_grace < k_turn_deadline);
  // busy again (someone took it meanwhile): the deadline is gone with that turn
  plan.busy(Millis(20'000), t0 + Millis(1500), Millis(0), Millis(0), true);
  CHECK(plan.next(t0 + Millis(1500)).until == t0 + Millis(21'501));
  // a second '00' never puts an earlier deadline off
  plan.passed_over(0, t0 + Millis(2000), Millis(0));
  plan.passed_over(0, t0 + Millis(2300), Millis(0));
  CHECK(plan.next(t0 + Millis(2300)).until == t0 + Millis(2000) + k_turn_deadline);
  // never past the wait's deadline
  WaitPlan late(Millis(1000), t0);
  late.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  late.subscribed();
  late.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  late.passed_over(0, t0 + Millis(900), Millis(100));
  CHECK(late.next(t0 + Millis(900)).until == t0 + Millis(1000));
}

TEST_CASE("waiter: not queued (a holder whose release names no turns), '00' is a release") {
  WaitPlan plan(Millis(60'000), t0);
  plan.busy(Millis(30'000), t0);
  CHECK(!plan.queued());
  plan.subscribed();
  plan.busy(Millis(30'000), t0 + Millis(2));
  plan.passed_over(0, t0 + Millis(500));
  CHECK(plan.next(t0 + Millis(500)).step == Step::attempt);
}

TEST_CASE("waiter: next in line ('next') attempts k_turn_grace later, in case the named one died") {
  WaitPlan plan(Millis(60'000), t0);
  plan.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  plan.subscribed();
  plan.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  plan.passed_over(0, t0 + Millis(1000), Millis(0));
  plan.next_in_line(t0 + Millis(1000));
  auto next = plan.next(t0 + Millis(1000));
  CHECK(next.step == Step::wait);
  CHECK(next.until == t0 + Millis(1000) + rlock::lock::k_turn_grace);
  CHECK(plan.next(t0 + Millis(1000) + rlock::lock::k_turn_grace).step == Step::attempt);
  // 'taken' before then: the attempt stands (it learns the new holder's
  // lease end; without it a waiter behind sleeps to the old one)
  WaitPlan told(Millis(60'000), t0);
  told.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  told.subscribed();
  told.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  told.next_in_line(t0 + Millis(1000));
  told.taken();
  CHECK(told.next(t0 + Millis(1000) + rlock::lock::k_turn_grace).step == Step::attempt);
  // ... while a turn's deadline ('00') is what 'taken' cancels
  WaitPlan passed(Millis(60'000), t0);
  passed.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  passed.subscribed();
  passed.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  passed.passed_over(0, t0 + Millis(1000), Millis(0));
  passed.taken();
  CHECK(passed.next(t0 + Millis(1000) + rlock::lock::k_turn_deadline).until == t0 + Millis(30'003));
  // Busy again (the named one took it): queued, back to the lease end it sees now.
  plan.busy(Millis(30'000), t0 + Millis(1300), Millis(0), Millis(0), true);
  CHECK(plan.next(t0 + Millis(1300)).until == t0 + Millis(31'301));
  // Told so near the deadline: no attempt past it.
  WaitPlan late(Millis(1000), t0);
  late.busy(Millis(30'000), t0, Millis(0), Millis(0), true);
  late.subscribed();
  late.busy(Millis(30'000), t0 + Millis(2), Millis(0), Millis(0), true);
  late.next_in_line(t0 + Millis(900));
  CHECK(late.next(t0 + Millis(900)).until == t0 + Millis(1000));
}

TEST_CASE("waiter: every waiter hears the release channel, and the other layouts' (issue 42)") {
  using rlock::lock::Mode;
  using rlock::lock::turns_channel;
  using rlock::lock::wait_channels;
  rlock::lock::AcquireRequest request;
  request.keys = rlock::lock::keys_for("J");
  request.owner = "me";
  const std::string release = "redisson_lock__channel:{J}";
  const std::string rw = "redisson_rwlock:{J}";
  const std::string permits = "redisson_sc:{J}";
  CHECK(turns_channel(request.keys) == release + ":rlock:turns");
  using V = std::vector<std::string>;
  // plain, queued for its turn: the release channel (Redisson's unlock, a user
  // without the turns' key), its own, the turns channel, and the read-write lock's
  CHECK(wait_channels(request, true) == V{release, release + ":me", release + ":rlock:turns", rw});
  CHECK(wait_channels(request, false) == V{release, rw});
  CHECK(wait_channels(request, true, false) == V{release, release + ":me", release + ":rlock:turns"});
  // queued behind the head (lua/lib/turns.lua): its own first (where 'head'
  // comes), never the release channel ('00' would wake every waiter)
  CHECK(wait_channels(request, true, true, true) == V{release + ":me", rw});
  CHECK(wait_channels(request, true, false, true) == V{release + ":me"});
  CHECK(wait_channels(request, false, true, true) == V{release, rw}); // not queued: `behind` means nothing
  request.mode.mode = Mode::fair; // its own first (RFairLock's head), then Redisson's forceUnlock's
  CHECK(wait_channels(request, false) == V{release + ":me", release, rw});
  CHECK(wait_channels(request, false, false) == V{release + ":me", release});
  request.mode.mode = Mode::read; // a plain hold's release wakes a reader or a writer
  CHECK(wait_channels(request, false) == V{rw, release});
  CHECK(wait_channels(request, false, false) == V{rw});
  request.mode.mode = Mode::write;
  CHECK(wait_channels(request, false) == V{rw, release});
  request.mode.mode = Mode::limit;
  CHECK(wait_channels(request, false) == V{permits, release, rw});
}

TEST_CASE("waiter: a --limit semaphore met by another mode is a conflict no wait ends") {
  using rlock::lock::Layout;
  using rlock::lock::Mode;
  using rlock::lock::waiting_cannot_end;
  rlock::lock::Holder holder;
  holder.layout = Layout::semaphore;
  CHECK(waiting_cannot_end(Mode::exclusive, holder));
  CHECK(waiting_cannot_end(Mode::fair, holder));
  CHECK(waiting_cannot_end(Mode::read, holder));
  CHECK(!waiting_cannot_end(Mode::limit, holder)); // every permit taken: one comes back
  holder.layout = Layout::write;
  CHECK(!waiting_cannot_end(Mode::exclusive, holder));
  holder.layout = Layout::none;
  CHECK(!waiting_cannot_end(Mode::exclusive, holder));
}
