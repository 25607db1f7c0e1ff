// The typed lock state and its words: decoded once (lock::layout_of,
// detail::decode_*), turned into words only by cli/render.
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/lock/detail.hpp>

#include <doctest/doctest.h>

#include <tuple>

#include "replies.hpp"

using rlock::Millis;
using rlock::lock::Layout;
using rlock::test::array;
using rlock::test::integer;
using rlock::test::str;

TEST_CASE("layouts: each script word decodes to its layout and renders back to the same word") {
  for (const char* word : {"", "exclusive", "fair", "read", "write", "semaphore"}) {
    CAPTURE(word);
    CHECK(rlock::cli::layout_word(rlock::lock::layout_of(word), "?") == word);
  }
  CHECK(rlock::lock::layout_of("?") == Layout::other);
  CHECK(rlock::lock::layout_of("queue") == Layout::other); // "queue" is never a layout: Holder::queue_turn
  rlock::lock::LockState odd;
  odd.layout = Layout::other;
  odd.mode_field = "sideways";
  CHECK(rlock::cli::mode_word(odd) == "sideways"); // status --json "mode": as read
}

TEST_CASE("a busy holder's held_as words") {
  using rlock::lock::Mode;
  rlock::lock::Holder holder;
  CHECK(rlock::cli::held_as_word(holder, Mode::exclusive).empty());
  holder.queue_turn = true;
  CHECK(rlock::cli::held_as_word(holder, Mode::fair) == "queue");
  holder.queue_turn = false;
  holder.layout = Layout::write;
  CHECK(rlock::cli::held_as_word(holder, Mode::read) == "write");
  holder.layout = Layout::other;
  CHECK(rlock::cli::held_as_word(holder, Mode::exclusive) == "?");
  // The semaphore's layout: another layout for a plain request; for --limit,
  // every permit taken (no held_as, and the JSON's type says "semaphore").
  holder.layout = Layout::semaphore;
  holder.type = rlock::lock::KeyType::string;
  CHECK(rlock::cli::held_as_word(holder, Mode::exclusive) == "semaphore");
  CHECK(rlock::cli::holder_type_word(holder, Mode::exclusive) == "string");
  CHECK_FALSE(rlock::cli::every_permit_taken(holder, Mode::exclusive));
  CHECK(rlock::cli::held_as_word(holder, Mode::limit).empty());
  CHECK(rlock::cli::holder_type_word(holder, Mode::limit) == "semaphore");
  CHECK(rlock::cli::every_permit_taken(holder, Mode::limit));
}

TEST_CASE("Redlock answers and doctor verdicts render as before") {
  using Kind = rlock::lock::NodeAnswer::Kind;
  CHECK(rlock::cli::answer_word({"redis://a", Kind::granted, {}}) == "granted");
  CHECK(rlock::cli::answer_word({"redis://a", Kind::busy, {}}) == "busy");
  CHECK(rlock::cli::answer_word({"redis://a", Kind::unreachable, "connection refused"}) ==
        "unreachable: connection refused");
  auto nodes = rlock::cli::nodes_json({{"redis://a", Kind::granted, {}}, {"redis://b", Kind::unreachable, "x"}});
  CHECK(nodes.dump() == R"([{"answer":"granted","granted":true,"url":"redis://a"},)"
                        R"({"answer":"unreachable: x","granted":false,"url":"redis://b"}])");
  CHECK(rlock::cli::verdict_word(rlock::lock::Verdict::ok) == "ok");
  CHECK(rlock::cli::verdict_word(rlock::lock::Verdict::warning) == "warning");
  CHECK(rlock::cli::verdict_word(rlock::lock::Verdict::unsafe) == "unsafe");
  CHECK(rlock::cli::mode_word(rlock::lock::Mode::read) == "shared");
  CHECK(rlock::cli::mode_word(rlock::lock::Mode::limit) == "limit");
}

TEST_CASE("decode_acquire is pure: it needs no connection and undoes nothing") {
  // An acquisition too few replicas acknowledged is decoded as what it is;
  // undo_if_unsynced, at the call site, is what releases it.
  auto eval = [](rlock::redis::Reply reply, long long acked) {
    rlock::redis::EvalReply answer;
    answer.reply = std::move(reply);
    answer.acked = acked;
    return answer;
  };
  auto answer = eval(array({integer(1), integer(1), integer(7), integer(30000)}), 0);
  auto result = rlock::lock::detail::decode_acquire(answer, rlock::TimePoint{}, Millis(30000));
  CHECK(result.acquired);
  CHECK_FALSE(result.reentered);
  CHECK(result.fence == 7);
  CHECK(result.lease.count() == 30000);
  CHECK(result.replicas_acked == 0);

  // The busy answers: a fair waiter's turn and a layout, typed once.
  rlock::redis::Reply nil;
  auto turn = rlock::lock::detail::decode_acquire(
      eval(array({integer(0), str("head"), integer(-2), str("hash"), nil}), -1), rlock::TimePoint{}, Millis(30000));
  CHECK_FALSE(turn.acquired);
  CHECK(turn.holder.queue_turn);
  CHECK(turn.holder.layout == Layout::none);
  auto rw = rlock::lock::detail::decode_acquire(
      eval(array({integer(0), str("w:write"), integer(5000), str("hash"), nil, str("write")}), -1),
      rlock::TimePoint{}, Millis(30000));
  CHECK(rw.holder.layout == Layout::write);
  CHECK_FALSE(rw.holder.queue_turn);
  CHECK_FALSE(rw.queued);
  // Queued for its turn behind a plain hold: at the head (1), behind it (2);
  // any other 7th element is not a place in the queue.
  for (auto [code, queued, behind] : {std::tuple{1, true, false}, {2, true, true}, {3, false, false}, {0, false, false}}) {
    auto waiting = rlock::lock::detail::decode_acquire(
        eval(array({integer(0), str("h"), integer(5000), str("hash"), nil, nil, integer(code)}), -1),
        rlock::TimePoint{}, Millis(30000));
    CHECK(waiting.queued == queued);
    CHECK(waiting.behind == behind);
  }
  // Every permit taken: the semaphore's key type and layout (no pseudo-type).
  auto permits = rlock::lock::detail::decode_acquire(
      {array({integer(0), str("p1"), integer(800), str("string"), nil, str("semaphore")}),
       -1,
       {},
       {},
       {},
       {}},
      rlock::TimePoint{}, Millis(30000));
  CHECK(permits.holder.type == rlock::lock::KeyType::string);
  CHECK(permits.holder.layout == Layout::semaphore);
  CHECK(permits.holder.owner == "p1");
}

TEST_CASE("key types: TYPE's words decode once and render back to the same word") {
  using rlock::lock::KeyType;
  for (const char* word : {"none", "string", "list", "set", "zset", "hash", "stream", "vectorset"}) {
    CAPTURE(word);
    CHECK(rlock::lock::key_type_of(word) != KeyType::other);
    CHECK(rlock::lock::key_type_name(rlock::lock::key_type_of(word)) == word);
  }
  CHECK(rlock::lock::key_type_of("") == KeyType::none); // nothing said: no key
  CHECK(rlock::lock::key_type_of("ReJSON-RL") == KeyType::other); // a module's type
  CHECK(rlock::lock::key_type_name(KeyType::other) == "other");
  CHECK(rlock::lock::key_type_of("semaphore") == KeyType::other); // a layout, never a type
}

TEST_CASE("a fair waiter whose give-up time has passed is no waiter: not counted, not shown (issue 30)") {
  using rlock::test::array;
  using rlock::test::integer;
  using rlock::test::str;
  const long long now = 1'800'000'000'000;
  auto record = [](long long until) { return str(R"({"host":"h","pid":7,"since_ms":1,"until_ms":)" + std::to_string(until) + "}"); };
  // {type, pttl, fields, complete, queue, readers, permits, now, done}
  auto entry = array({str("none"), integer(-2), array({}), integer(1),
                      array({str("dead-rlock"), integer(20'000), record(now - 7585), // its own give-up passed
                             str("live-rlock"), integer(-3000), record(now + 5000),  // score lowered by Redisson; alive
                             str("dead-redisson"), integer(-1), str(""),              // Redisson's, score passed
                             str("live-redisson"), integer(4000), str(""),
                             str("no-score"), rlock::redis::Reply{}, str("")}),      // never stale (Redisson's rule)
                      array({}), array({}), integer(now), array({})});
  auto state = rlock::lock::detail::decode_inspected("wk", entry);
  REQUIRE(state.waiters.size() == 3);
  CHECK(state.waiters[0].owner == "live-rlock");
  CHECK(state.waiters[0].gives_up_in == Millis(5000));
  CHECK(state.waiters[1].owner == "live-redisson");
  CHECK(state.waiters[1].gives_up_in == Millis(4000));
  CHECK(state.waiters[2].owner == "no-score");
  CHECK_FALSE(state.waiters[2].gives_up_in);
  entry.elements[4] = array({str("dead-rlock"), integer(20'000), record(now - 1)});
  state = rlock::lock::detail::decode_inspected("wk", entry);
  CHECK(state.waiters.empty());
}

TEST_CASE("a waiter off a terminal: a line when the wait begins, then one a minute or when the holder "
          "changes (issue 43)") {
  rlock::cli::WaitLinePace pace;
  const rlock::TimePoint t0{}; // made-up times
  auto at = [&](long long ms) { return t0 + Millis(ms); };
  CHECK(pace.due(at(0), "L\nowner-a"));      // the wait begins
  CHECK(!pace.due(at(1'000), "L\nowner-a")); // the waiter's display ticks each second: quiet
  CHECK(!pace.due(at(59'999), "L\nowner-a"));
  CHECK(pace.due(at(60'000), "L\nowner-a")); // a minute on
  CHECK(!pace.due(at(61'000), "L\nowner-a"));
  CHECK(pace.due(at(62'000), "L\nowner-b")); // another holder: at once
  CHECK(!pace.due(at(63'000), "L\nowner-b"));
  CHECK(pace.due(at(64'000), "M\nowner-b")); // another lock (several names): at once
  CHECK(!pace.due(at(64'000 + 59'999), "M\nowner-b"));
  CHECK(pace.due(at(64'000 + 60'000), "M\nowner-b"));
  CHECK(rlock::cli::WaitLinePace::k_every == Millis(60'000));
}
