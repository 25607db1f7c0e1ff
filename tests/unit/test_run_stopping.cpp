// run/'s decisions (what to stop, when, with which signal, what to say)
// against a fake process tree and made-up times: run::Stopping, the
// supervisor's turn without its I/O (as ninja tests its builder on a fake
// command runner).
#include <rlock/run/stopping.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using rlock::Millis;
using rlock::TimePoint;
using rlock::run::LeaseState;
using rlock::run::OnLost;
using rlock::run::Said;
using rlock::run::Stopping;
using rlock::run::StopPlan;

namespace {

// A process tree that obeys signals as processes do: SIGKILL ends every
// process; SIGTERM ends those that do not ignore it, a stopped one only once
// it is continued (SIGCONT); what each call got is kept.
class FakeTree final : public rlock::run::ProcessTree {
public:
  struct Proc {
    pid_t pid;
    std::string name;
    bool ignores_term = false;
    bool stopped = false;
    bool term_pending = false;
  };
  std::vector<Proc> procs;
  std::vector<int> sent; // every signal, in order

  std::vector<rlock::run::Process> signal(int sig) override {
    sent.push_back(sig);
    auto found = alive();
    for (auto& p : procs) {
      if (sig == SIGTERM && !p.ignores_term) {
        p.term_pending = true;
      } else if (sig == SIGCONT) {
        p.stopped = false;
      }
    }
    std::erase_if(procs, [&](const Proc& p) { return sig == SIGKILL || (p.term_pending && !p.stopped); });
    return found;
  }
  std::vector<rlock::run::Process> alive() override {
    std::vector<rlock::run::Process> out;
    for (const auto& p : procs) {
      out.push_back({p.pid, p.name});
    }
    return out;
  }
  bool empty() const { return procs.empty(); }
  // The signals sent since the last call.
  std::vector<int> take() { return std::exchange(sent, {}); }
};

const TimePoint t0 = TimePoint{} + 1000h;

// A lease that holds (nothing to stop for).
LeaseState holding() {
  LeaseState lease;
  lease.stop_at = lease.kill_at = TimePoint::max();
  return lease;
}

StopPlan::Config config(OnLost on_lost = OnLost::term, Millis kill_after = 10s) {
  StopPlan::Config c;
  c.on_lost = on_lost;
  c.kill_after = kill_after;
  c.first_renewal = t0 + 10s;
  return c;
}

// The lease as the plan reads it.
rlock::run::LeaseView view(const LeaseState& lease) {
  return {lease.stop_at, lease.kill_at, lease.lost};
}

const Stopping::Settings k_settings{"run \"L\" on redis://h", std::nullopt};

// A lease that no renewal confirmed: stop CMD at `stop_at`, kill it by `kill_at`.
LeaseState unconfirmed_from(TimePoint stop_at, TimePoint kill_at) {
  LeaseState lease = holding();
  lease.stop_at = stop_at;
  lease.kill_at = kill_at;
  return lease;
}

} // namespace

TEST_CASE(
    "stopping: while CMD runs and the lease holds, nothing is signalled or said; renewals start when due") {
  FakeTree tree;
  tree.procs = {{100, "job"}};
  Stopping stopping(config(), k_settings);
  auto turn = stopping.turn(t0, holding(), {false, false, false}, tree);
  CHECK_FALSE(turn.finished);
  CHECK_FALSE(turn.start_renewals);
  CHECK(turn.wake == t0 + 10s); // the first renewal
  CHECK(turn.said.empty());
  CHECK(tree.take().empty());
  turn = stopping.turn(t0 + 10s, holding(), {false, false, false}, tree);
  CHECK(turn.start_renewals);
  CHECK(turn.wake == TimePoint::max());
  turn = stopping.turn(t0 + 20s, holding(), {true, false, false}, tree);
  CHECK_FALSE(turn.start_renewals);
  CHECK(tree.take().empty());
  CHECK(stopping.plan().exit_status(3) == 3);
}

TEST_CASE(
    "stopping: CMD exits leaving processes: SIGTERM (and SIGCONT) to the tree first, the warning naming "
    "them after, SIGKILL after --kill-after, then the end with CMD's status") {
  FakeTree tree;
  tree.procs = {{12, "sleep", true}, {13, "stuck", false, true}}; // ignores SIGTERM; stopped (Ctrl-Z)
  Stopping stopping(config(OnLost::term, 10s), k_settings);
  auto turn = stopping.turn(t0, holding(), {true, true, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGTERM, SIGCONT});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::warning,
             "run \"L\" on redis://h: CMD exited but left sleep (pid 12), stuck (pid 13) running; "
             "stopping them (SIGTERM, SIGKILL after 10s) before releasing the lock "
             "(--wait-descendants waits for them instead)"});
  CHECK(turn.wake == t0 + 10s);
  // The stopped one acted on SIGTERM once continued; the one that ignores it is left.
  REQUIRE(tree.procs.size() == 1);
  CHECK(tree.procs[0].pid == 12);
  turn = stopping.turn(t0 + 5s, holding(), {true, true, false}, tree);
  CHECK(tree.take().empty());
  CHECK(turn.said.empty()); // said once
  turn = stopping.turn(t0 + 10s, holding(), {true, true, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGKILL});
  CHECK(turn.said.empty());
  CHECK(tree.empty());
  turn = stopping.turn(t0 + 10s, holding(), {true, true, true}, tree);
  CHECK(turn.finished);
  CHECK(stopping.plan().exit_status(0) == 0); // CMD's own status: leftovers are no loss
  CHECK(stopping.plan().release(t0 + 10s, {TimePoint::max(), TimePoint::max(), false}).send);
}

TEST_CASE(
    "stopping: --wait-descendants signals nothing, says once what it waits for, ends when the tree is gone") {
  FakeTree tree;
  tree.procs = {{21, "daemon"}};
  auto c = config();
  c.wait_descendants = true;
  Stopping stopping(c, k_settings);
  auto turn = stopping.turn(t0, holding(), {true, true, false}, tree);
  CHECK(tree.take().empty());
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] == Said{Said::Level::info,
                             "run \"L\" on redis://h: CMD exited; holding the lock until what "
                             "it left running ends (--wait-descendants): daemon (pid 21)"});
  turn = stopping.turn(t0 + 1h, holding(), {true, true, false}, tree);
  CHECK(turn.said.empty());
  CHECK(tree.take().empty());
  CHECK(stopping.turn(t0 + 2h, holding(), {true, true, true}, tree).finished);
  // CMD ended with nothing left: nothing to wait for, nothing said.
  FakeTree empty;
  Stopping quiet(c, k_settings);
  turn = quiet.turn(t0, holding(), {true, true, true}, empty);
  CHECK(turn.finished);
  CHECK(turn.said.empty());
  CHECK(empty.take().empty());
}

TEST_CASE("stopping: a lock lost: the tree is stopped before the loss is said; SIGKILL after --kill-after; "
          "exit 76 and one release within what is left of the lease") {
  FakeTree tree;
  tree.procs = {{30, "job", true}};
  Stopping stopping(config(OnLost::term, 2s), k_settings);
  LeaseState lease = holding();
  lease.lost = true;
  lease.lost_reason = "held by another owner";
  lease.kill_at = t0 + 20s;
  auto turn = stopping.turn(t0, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGTERM, SIGCONT});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::error,
             "run \"L\" on redis://h: lock lost: held by another owner; stopping CMD (SIGTERM)"});
  CHECK(turn.wake == t0 + 2s);
  turn = stopping.turn(t0 + 2s, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGKILL});
  CHECK(turn.said.empty()); // the loss is said once
  CHECK(stopping.turn(t0 + 2s, lease, {true, true, true}, tree).finished);
  CHECK(stopping.plan().exit_status(0) == 76);
  auto release = stopping.plan().release(t0 + 2s, view(lease));
  CHECK(release.send);
  REQUIRE(release.within);
  CHECK(*release.within == 18s);
  CHECK_FALSE(stopping.plan().hold_for(t0 + 2s));
}

TEST_CASE("stopping: a lease that cannot be confirmed: SIGTERM at its stop time, SIGKILL by its kill time "
          "whatever --kill-after says, and why, with the replicas' part") {
  FakeTree tree;
  tree.procs = {{40, "job", true}};
  Stopping stopping(config(OnLost::term, 10s), k_settings);
  LeaseState lease = unconfirmed_from(t0 + 5s, t0 + 6s);
  lease.last_unsynced = true;
  lease.last_error = "0 of 1 replicas acknowledged it";
  auto turn = stopping.turn(t0 + 1s, lease, {true, false, false}, tree);
  CHECK(tree.take().empty());
  CHECK(turn.wake == t0 + 5s);
  turn = stopping.turn(t0 + 5s, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGTERM, SIGCONT});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].level == Said::Level::error);
  CHECK(turn.said[0].text ==
        "run \"L\" on redis://h: no replica confirmed the renewal in time: the lock may still be held on the "
        "primary, but a failover would promote a replica without it (0 of 1 replicas acknowledged it); "
        "stopping "
        "CMD (SIGTERM)");
  CHECK(turn.wake == t0 + 6s); // the lease's kill time, before --kill-after's
  turn = stopping.turn(t0 + 6s, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGKILL});
  CHECK(stopping.turn(t0 + 6s, lease, {true, true, true}, tree).finished);
  CHECK(stopping.plan().exit_status(0) == 76);
  CHECK_FALSE(stopping.plan().release(t0 + 6s, view(lease)).send); // it may have expired: no release at all

  // Without replicas in the story: the plain words, and the last error.
  FakeTree other;
  other.procs = {{41, "job"}};
  Stopping plain(config(), k_settings);
  lease.last_unsynced = false;
  lease.last_error = "timed out";
  turn = plain.turn(t0 + 5s, lease, {true, false, false}, other);
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].text ==
        "run \"L\" on redis://h: lock lost: no renewal could be confirmed in time (timed out); "
        "stopping CMD (SIGTERM)");
}

// Issue 43: "lock lost" was said before the warning that explains it (a
// renewal in flight at the stop time, its timeout's warning a moment later).
// The stop is done at once; its words wait for the renewal's error (which the
// watchdog makes known only after its warning), the kill time, or the end.
TEST_CASE(
    "stopping: an unconfirmed lease with its renewal in flight: stopped at once, said once the error is "
    "known") {
  FakeTree tree;
  tree.procs = {{40, "job", true}};
  Stopping stopping(config(OnLost::term, 10s), k_settings);
  LeaseState lease = unconfirmed_from(t0 + 5s, t0 + 6s);
  auto turn = stopping.turn(t0 + 5s, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGTERM, SIGCONT}); // stopped first, whatever is said
  CHECK(turn.said.empty());
  CHECK(turn.wake <= t0 + 6s);
  turn = stopping.turn(t0 + 5s + 100ms, lease, {true, false, false}, tree);
  CHECK(turn.said.empty());       // nothing known yet
  lease.last_error = "timed out"; // the watchdog's warning is written
  turn = stopping.turn(t0 + 5s + 200ms, lease, {true, false, false}, tree);
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].text ==
        "run \"L\" on redis://h: lock lost: no renewal could be confirmed in time (timed out); "
        "stopping CMD (SIGTERM)");
  turn = stopping.turn(t0 + 5s + 300ms, lease, {true, false, false}, tree);
  CHECK(turn.said.empty()); // said once

  // No error by the kill time: said then, before the SIGKILL's line.
  FakeTree slow;
  slow.procs = {{41, "job", true}};
  Stopping late(config(OnLost::term, 10s), k_settings);
  lease.last_error.clear();
  CHECK(late.turn(t0 + 5s, lease, {true, false, false}, slow).said.empty());
  turn = late.turn(t0 + 6s, lease, {true, false, false}, slow);
  CHECK(slow.take() == std::vector<int>{SIGTERM, SIGCONT, SIGKILL});
  REQUIRE_FALSE(turn.said.empty());
  CHECK(turn.said[0].text ==
        "run \"L\" on redis://h: lock lost: no renewal could be confirmed in time; stopping CMD (SIGTERM)");

  // CMD ends on SIGTERM before the error is known: said as the run ends.
  FakeTree quick;
  quick.procs = {{42, "job"}};
  Stopping ends(config(OnLost::term, 10s), k_settings);
  CHECK(ends.turn(t0 + 5s, lease, {true, false, false}, quick).said.empty());
  turn = ends.turn(t0 + 5s + 50ms, lease, {true, true, true}, quick);
  CHECK(turn.finished);
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].text.find("lock lost: no renewal could be confirmed in time; stopping CMD (SIGTERM)") !=
        std::string::npos);
}

TEST_CASE("stopping: --on-lost ignore warns and signals nothing; --on-lost kill sends SIGKILL at once") {
  LeaseState lease = holding();
  lease.lost = true;
  lease.lost_reason = "gone";
  FakeTree tree;
  tree.procs = {{50, "job"}};
  Stopping ignoring(config(OnLost::ignore), k_settings);
  auto turn = ignoring.turn(t0, lease, {true, false, false}, tree);
  CHECK(tree.take().empty());
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::warning,
             "run \"L\" on redis://h: lock lost: gone; --on-lost ignore: CMD keeps running unprotected"});
  CHECK(ignoring.turn(t0 + 1s, lease, {true, false, false}, tree).said.empty()); // once
  CHECK(ignoring.plan().exit_status(5) == 5);

  Stopping killing(config(OnLost::kill), k_settings);
  turn = killing.turn(t0, lease, {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGKILL});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].text == "run \"L\" on redis://h: lock lost: gone; stopping CMD (SIGKILL)");
  CHECK(tree.empty());
}

TEST_CASE("stopping: --max-hold stops CMD as a lost lock does, says so, exits 76, and releases as usual") {
  FakeTree tree;
  tree.procs = {{60, "job"}};
  auto c = config();
  c.max_hold_at = t0 + 1h;
  Stopping stopping(c, {"run \"L\" on redis://h", Millis(3'600'000)});
  auto turn = stopping.turn(t0 + 30min, holding(), {true, false, false}, tree);
  CHECK(tree.take().empty());
  CHECK(turn.wake == t0 + 1h);
  turn = stopping.turn(t0 + 1h, holding(), {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGTERM, SIGCONT});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::error, "run \"L\" on redis://h: held for --max-hold 1h; stopping CMD (SIGTERM)"});
  CHECK(stopping.turn(t0 + 1h, holding(), {true, true, true}, tree).finished);
  CHECK(stopping.plan().exit_status(143) == 76);
  auto release = stopping.plan().release(t0 + 1h, view(holding()));
  CHECK(release.send);
  CHECK_FALSE(release.within); // the lease was never lost: the usual release
}

TEST_CASE("stopping: the guardian gone before CMD: SIGKILL to the tree, said after, exit 137") {
  FakeTree tree;
  tree.procs = {{70, "job", true}, {71, "child", true}};
  Stopping stopping(config(), k_settings);
  stopping.plan().orphaned();
  auto turn = stopping.turn(t0, holding(), {true, false, false}, tree);
  CHECK(tree.take() == std::vector<int>{SIGKILL});
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::error,
             "run \"L\" on redis://h: rlock's guardian process (rlock-guardian, CMD's parent) ended "
             "before CMD; stopping CMD (SIGKILL) and releasing the lock"});
  CHECK(tree.empty());
  CHECK(stopping.turn(t0, holding(), {true, true, true}, tree).finished);
  CHECK(stopping.plan().exit_status(0) == 128 + SIGKILL);

  // Seen only once CMD's tree was gone too (the keeper's death killed CMD,
  // reaped here in the same turn): nothing to signal, the same line said.
  FakeTree gone;
  Stopping late(config(), k_settings);
  late.plan().orphaned();
  turn = late.turn(t0, holding(), {true, true, true}, gone);
  CHECK(turn.finished);
  CHECK(gone.take().empty());
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].text.find("rlock's guardian process (rlock-guardian, CMD's parent) ended before CMD") !=
        std::string::npos);
  CHECK(late.plan().exit_status(0) == 128 + SIGKILL);
}

TEST_CASE("stopping: CMD's end seen only after the lease ran out (rlock stopped past it): exit 76, said with "
          "when it ran out and how long rlock did not run (issue 41)") {
  LeaseState lease = holding();
  lease.stop_at = t0 + 700ms;
  lease.kill_at = t0 + 900ms;
  FakeTree tree;
  tree.procs = {{60, "job"}};
  Stopping stopping(config(), k_settings);
  auto turn = stopping.turn(t0 + 50ms, lease, {false, false, false}, tree);
  CHECK(turn.wake == t0 + 700ms);
  // rlock stopped from then until t0 + 3.05s; CMD ended meanwhile.
  tree.procs.clear();
  turn = stopping.turn(t0 + 3050ms, lease, {false, true, true}, tree);
  CHECK(turn.finished);
  CHECK(tree.take().empty()); // nothing left to signal
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0] ==
        Said{Said::Level::error,
             "run \"L\" on redis://h: lock lost: the lease ran out 2.2s before CMD's end was "
             "seen: rlock did not run for 3s (stopped, or the machine slept), so CMD ran part "
             "of its time unprotected"});
  CHECK(stopping.plan().exit_status(0) == 76);
  CHECK_FALSE(
      stopping.plan().release(t0 + 3050ms, view(lease)).send); // it may have expired: nothing to release

  // Seen before the lease's kill time: CMD's own status, nothing said.
  Stopping in_time(config(), k_settings);
  CHECK(in_time.turn(t0 + 50ms, lease, {false, false, false}, tree).said.empty());
  turn = in_time.turn(t0 + 899ms, lease, {false, true, true}, tree);
  CHECK(turn.finished);
  CHECK(turn.said.empty());
  CHECK(in_time.plan().exit_status(3) == 3);

  // --on-lost ignore: a warning, CMD's status.
  Stopping ignoring(config(OnLost::ignore), k_settings);
  turn = ignoring.turn(t0 + 4s, lease, {false, true, true}, tree);
  REQUIRE(turn.said.size() == 1);
  CHECK(turn.said[0].level == Said::Level::warning);
  CHECK(ignoring.plan().exit_status(3) == 3);

  // A loss already handled (stopped at stop_at): no second message.
  FakeTree job;
  job.procs = {{61, "job"}};
  Stopping stopped(config(), k_settings);
  CHECK(stopped.turn(t0 + 700ms, lease, {false, false, false}, job).said.size() == 1);
  CHECK(stopped.turn(t0 + 2s, lease, {false, true, true}, job).said.empty());
  CHECK(stopped.plan().exit_status(0) == 76);
}
