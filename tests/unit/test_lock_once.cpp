#include <rlock/lock/once.hpp>
#include <rlock/lock/record.hpp>

#include <doctest/doctest.h>

using rlock::lock::DoneRecord;
using rlock::lock::judge_once;
using rlock::lock::OnceVerdict;
using rlock::lock::parse_done_record;
using rlock::lock::window_of;

namespace {
constexpr long long k_day = 86'400'000;
// 2026-11-24T00:00:00Z
constexpr long long k_nov24 = 1'795'478'400'000;

DoneRecord done_at(long long at, long long ttl = 1000) {
  DoneRecord record;
  record.done_at_ms = at;
  record.ttl_ms = ttl;
  return record;
}
} // namespace

TEST_CASE("window_of: consecutive windows since the epoch, start inclusive, end exclusive") {
  CHECK(k_nov24 % k_day == 0);
  auto w = window_of(k_nov24 + 3 * 3'600'000 + 17, k_day);
  CHECK(w.start_ms == k_nov24);
  CHECK(w.end_ms == k_nov24 + k_day);
  // Exactly on a boundary: the window that starts there.
  CHECK(window_of(k_nov24, k_day).start_ms == k_nov24);
  CHECK(window_of(k_nov24 - 1, k_day).start_ms == k_nov24 - k_day);
  CHECK(window_of(k_nov24 - 1, k_day).end_ms == k_nov24);
  // 2-second windows.
  CHECK(window_of(1'999, 2'000).start_ms == 0);
  CHECK(window_of(2'000, 2'000).start_ms == 2'000);
  CHECK(window_of(2'000, 2'000).end_ms == 4'000);
  CHECK(window_of(0, 2'000).start_ms == 0);
  // 1 ms windows: each instant is its own window.
  CHECK(window_of(k_nov24 + 5, 1).start_ms == k_nov24 + 5);
  CHECK(window_of(k_nov24 + 5, 1).end_ms == k_nov24 + 6);
  // Before the epoch (a server clock set wrong): still the window holding it.
  CHECK(window_of(-1, 1'000).start_ms == -1'000);
  CHECK(window_of(-1, 1'000).end_ms == 0);
  CHECK(window_of(-1'000, 1'000).start_ms == -1'000);
  // 7d windows start on Thursdays (1970-01-01 was one): 2026-11-19.
  CHECK(window_of(k_nov24, 7 * k_day).start_ms == k_nov24 - 5 * k_day);
}

TEST_CASE("judge_once: done when the completion falls in the current window") {
  CHECK(judge_once(std::nullopt, k_nov24 + 5, k_day) == OnceVerdict::not_done);
  CHECK(judge_once(done_at(k_nov24), k_nov24 + k_day - 1, k_day) == OnceVerdict::done);
  CHECK(judge_once(done_at(k_nov24 + 10), k_nov24 + 10, k_day) == OnceVerdict::done);
  // Yesterday's completion (a record still alive, e.g. written with a longer DUR).
  CHECK(judge_once(done_at(k_nov24 - 1), k_nov24, k_day) == OnceVerdict::not_done);
  // A completion dated in a later window (a forged or skewed record) is not this window's.
  CHECK(judge_once(done_at(k_nov24 + k_day), k_nov24 + 1, k_day) == OnceVerdict::not_done);
  // The same record under another DUR: judged by when it was done.
  CHECK(judge_once(done_at(k_nov24 + 30 * 60'000), k_nov24 + 50 * 60'000, 3'600'000) == OnceVerdict::done);
  CHECK(judge_once(done_at(k_nov24 + 30 * 60'000), k_nov24 + 70 * 60'000, 3'600'000) ==
        OnceVerdict::not_done);
}

TEST_CASE("judge_once: a record that says nothing readable") {
  DoneRecord unreadable;
  unreadable.ttl_ms = 5'000; // with an expiry, as rlock writes them: taken as done
  CHECK(judge_once(unreadable, k_nov24, k_day) == OnceVerdict::unreadable);
  unreadable.ttl_ms = -1; // no expiry: not one of ours
  CHECK(judge_once(unreadable, k_nov24, k_day) == OnceVerdict::not_done);
}

// Issue 19: a readable record without an expiry counted as done, though
// rlock always sets one and the README says such a key is overwritten.
TEST_CASE("judge_once: a readable record without an expiry is not ours: not done") {
  CHECK(judge_once(done_at(k_nov24 + 1000, -1), k_nov24 + 2000, k_day) == OnceVerdict::not_done);
  CHECK(judge_once(done_at(k_nov24 + 1000, 1000), k_nov24 + 2000, k_day) == OnceVerdict::done);
}

TEST_CASE("parse_done_record: typed values, anything else left out") {
  auto record = parse_done_record(R"({"window_start_ms":1795478400000,"window_end_ms":1795564800000,)"
                                  R"("host":"h1","pid":12,"command":"backup.sh","done_at_ms":1795489200000,)"
                                  R"("exit":0,"version":"1.0","op":"00ff"})",
                                  3600);
  CHECK(record.readable());
  CHECK(record.window_start_ms == k_nov24);
  CHECK(record.window_end_ms == k_nov24 + k_day);
  CHECK(record.host == "h1");
  CHECK(record.pid == 12);
  CHECK(record.command == "backup.sh");
  CHECK(record.done_at_ms == 1'795'489'200'000);
  CHECK(record.exit == 0);
  CHECK(record.op == "00ff");
  CHECK(record.ttl_ms == 3600);

  for (const char* raw :
       {"", "garbage", "[1,2]", "{\"done_at_ms\":\"soon\"}", "{\"done_at_ms\":-5}", "{\"done_at_ms\":1.5}",
        "{\"done_at_ms\":1e300}", "null", "{\"done_at_ms\":null}"}) {
    CAPTURE(raw);
    CHECK(!parse_done_record(raw, 10).readable());
  }
  auto odd = parse_done_record(R"({"done_at_ms":5,"pid":-3,"exit":300,"window_start_ms":10,)"
                               R"("window_end_ms":10,"host":7,"op":{"x":1}})",
                               -1);
  CHECK(odd.readable());
  CHECK(!odd.pid);
  CHECK(!odd.exit);
  CHECK(!odd.window_start_ms); // an empty window is no window
  CHECK(!odd.window_end_ms);
  CHECK(!odd.host);
  CHECK(odd.op.empty());
}
