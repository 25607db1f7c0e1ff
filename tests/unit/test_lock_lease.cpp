// Where a lease starts and whether enough of it is left (lock/lease.hpp), with
// made-up times, and the acquire answer that says an earlier send applied it.
#include <rlock/lock/detail.hpp>
#include <rlock/lock/lease.hpp>
#include <rlock/run/watchdog.hpp>

#include <doctest/doctest.h>

#include "replies.hpp"

using namespace std::chrono_literals;
using rlock::Millis;
using rlock::TimePoint;
using rlock::lock::lease_left_enough;
using rlock::lock::lease_margin;
using rlock::lock::lease_start;
using rlock::lock::Sends;
using rlock::test::array;
using rlock::test::integer;

namespace {
const TimePoint t0 = TimePoint{} + 1000h;
} // namespace

TEST_CASE("lease start: the send that applied it, nothing before it (issue 41)") {
  const Millis lease = 2s; // asked, and answered by a fresh grant
  // A waiter's attempt sent at t0 got no answer (the server was stopped for
  // 6s); its resend at t0 + 8s took the lock: the lease runs from the resend.
  CHECK(lease_start({t0, t0 + 8s, t0}, false, lease, lease) == t0 + 8s);
  // Discovery (a silent Cluster seed, 2s), then the one send: from the send.
  CHECK(lease_start({t0, t0 + 2s, std::nullopt}, false, lease, lease) == t0 + 2s);
  // A LATE answer, sent again at once: the second send (eval_batch's `sent`).
  CHECK(lease_start({t0, t0 + 30ms, std::nullopt}, false, lease, lease) == t0 + 30ms);
  // The resend was answered from the latch: an earlier send applied it, the
  // earliest that got no answer (sent at t0 + 1s, after a 1s connect).
  CHECK(lease_start({t0, t0 + 8s, t0 + 1s}, true, lease, lease) == t0 + 1s);
  // ... none known (should not happen): when the caller asked.
  CHECK(lease_start({t0, t0 + 8s, std::nullopt}, true, lease, lease) == t0);
  // An answered send not known (TimePoint{}): the call; never before it otherwise.
  CHECK(lease_start({t0, TimePoint{}, std::nullopt}, false, lease, lease) == t0);
  CHECK(lease_start({t0, t0 + 1s, t0 - 1s}, true, lease, lease) == t0);
  // Found by the client's own token (an earlier send of it applied it): the
  // answer is the lease left, 500ms of 2s at the resend (t0 + 3s): a 2s lease
  // proven from t0 + 1.5s, which ends when the one on the server may.
  CHECK(lease_start({t0, t0 + 3s, t0}, false, 500ms, lease) == t0 + 1500ms);
  // A re-entry that answers a longer lease than asked: from its send.
  CHECK(lease_start({t0, t0 + 1s, std::nullopt}, false, 30s, lease) == t0 + 1s);
}

TEST_CASE("lease margin and what is left: LeaseClock's margin, from the one place") {
  CHECK(lease_margin(1s) == 100ms);
  CHECK(lease_margin(5ms) == 1ms);
  CHECK(lease_margin(1h) == 2s);
  // LeaseClock kills by start + ttl - margin: the same margin.
  rlock::run::LeaseClock clock(1s, 10s, t0);
  CHECK(clock.kill_at() == t0 + 1s - lease_margin(1s));
  // A 1s lease answered 3s after its send (a reply delayed 3s): nothing left.
  CHECK_FALSE(lease_left_enough(t0, 1s, t0 + 3s));
  CHECK(lease_left_enough(t0, 1s, t0 + 899ms));
  CHECK_FALSE(lease_left_enough(t0, 1s, t0 + 900ms)); // only the margin left
  CHECK(lease_left_enough(t0, 30s, t0 + 27s));
  CHECK_FALSE(lease_left_enough(t0, 30s, t0 + 28s));
  // Renewed before use when a tenth of it has gone (several names: the wait;
  // one name: a late answer).
  CHECK_FALSE(rlock::lock::lease_is_stale(t0, t0 + 100ms, 1s));
  CHECK(rlock::lock::lease_is_stale(t0, t0 + 101ms, 1s));
}

TEST_CASE("decode_acquire dates the lease from the send that applied it: the answer says whether that was "
          "an earlier send (its latch)") {
  rlock::redis::EvalReply answer;
  answer.sent = t0 + 8s;
  answer.earlier_unanswered = t0 + 1s;
  answer.reply = array({integer(1), integer(1), integer(7), integer(2000)});
  auto fresh = rlock::lock::detail::decode_acquire(answer, t0, 2s);
  CHECK(fresh.acquired);
  CHECK(fresh.sent_at == t0 + 8s); // this send applied it
  answer.reply = array({integer(1), integer(1), integer(7), integer(2000), integer(1)});
  auto replayed = rlock::lock::detail::decode_acquire(answer, t0, 2s);
  CHECK(replayed.acquired);
  CHECK(replayed.fence == 7);
  CHECK(replayed.sent_at == t0 + 1s); // the latch answered: an earlier send applied it
  answer.reply = array({integer(2), integer(2), integer(7), integer(2000), integer(1)});
  CHECK(rlock::lock::detail::decode_acquire(answer, t0, 2s).sent_at == t0 + 1s); // a re-entry alike
  // Found by its own token, 500ms left: a 2s lease dated 1.5s before the send.
  answer.reply = array({integer(1), integer(1), integer(7), integer(500)});
  CHECK(rlock::lock::detail::decode_acquire(answer, t0, 2s).sent_at == t0 + 6500ms);
  // A busy answer: the call.
  answer.reply = array({integer(0), rlock::test::str("other"), integer(900), rlock::test::str("hash")});
  CHECK(rlock::lock::detail::decode_acquire(answer, t0, 2s).sent_at == t0);
}
