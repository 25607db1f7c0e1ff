#include <rlock/cli/history.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/redis/reply.hpp>

#include <doctest/doctest.h>

#include "replies.hpp"

using rlock::lock::History;
using rlock::lock::HistoryEvent;
using rlock::redis::Reply;
using rlock::test::array;
using rlock::test::integer;
using rlock::test::str;

namespace {




HistoryEvent event(long long at, std::string kind, std::string owner, std::string fence = "",
                   std::string held = "") {
  HistoryEvent e;
  e.at_ms = at;
  e.id = std::to_string(at) + "-0";
  e.kind = std::move(kind);
  e.fields = {{"owner", std::move(owner)}, {"host", "h"}, {"pid", "1"}};
  if (!fence.empty()) {
    e.fields.emplace_back("fence", fence);
  }
  if (!held.empty()) {
    e.fields.emplace_back("held_ms", held);
  }
  return e;
}

History of(std::vector<HistoryEvent> events) {
  History h;
  h.type = rlock::lock::KeyType::none;
  h.events = std::move(events);
  return h;
}

} // namespace

TEST_CASE("decode_history: oldest first; anything not an event is malformed, never thrown") {
  auto reply = array({array({
                        array({str("200-0"), array({str("kind"), str("released"), str("owner"), str("o")})}),
                        array({str("100-0"), array({str("kind"), str("acquired"), str("owner"), str("o")})}),
                        array({str("not-an-id"), array({str("kind"), str("x")})}),
                        array({str("300-0"), array({str("owner"), str("o")})}), // no kind
                        array({str("400-0"), array({str("kind")})}),            // odd fields
                        integer(7),
                    }),
                    str("hash"), integer(0)});
  auto history = rlock::lock::decode_history(reply);
  REQUIRE(history.events.size() == 6);
  CHECK(history.events[0].malformed); // integer 7 (newest in XREVRANGE order: last shown first)
  CHECK(history.events[1].malformed);
  CHECK(history.events[2].malformed);
  CHECK(history.events[3].malformed);
  CHECK(history.events[4].kind == "acquired");
  CHECK(history.events[4].at_ms == 100);
  CHECK(history.events[5].kind == "released");
  CHECK(history.events[5].get("owner") == "o");
  CHECK(history.type == rlock::lock::KeyType::hash);
  CHECK_FALSE(history.redisson);
}

TEST_CASE("merge_majority: an event held by a majority is kept, with the earliest time and highest fence") {
  auto a = of({event(100, "acquired", "o", "7", "0"), event(200, "released", "o", "", "100")});
  auto b = of({event(101, "acquired", "o", "9", "0"), event(205, "released", "o", "", "104")});
  auto c = of({event(150, "acquired", "x", "1")}); // another owner: on one master only
  auto merged = rlock::lock::merge_majority({a, b, c}, 2, 20);
  REQUIRE(merged.events.size() == 2);
  CHECK(merged.events[0].kind == "acquired");
  CHECK(merged.events[0].at_ms == 100);
  CHECK(merged.events[0].get("fence") == "9");
  CHECK(merged.events[0].seen_on == 2);
  CHECK(merged.events[1].kind == "released");
}

TEST_CASE("merge_majority: repeated events are matched in order; a minority's extra one is dropped") {
  auto a = of({event(1, "acquired", "o"), event(2, "released", "o"), event(3, "acquired", "o")});
  auto b = of({event(1, "acquired", "o"), event(2, "released", "o")});
  auto c = of({});
  auto merged = rlock::lock::merge_majority({a, b, c}, 2, 20);
  REQUIRE(merged.events.size() == 2);
  CHECK(merged.events[0].kind == "acquired");
  CHECK(merged.events[1].kind == "released");
  CHECK(rlock::lock::merge_majority({a, b, c}, 2, 1).events.size() == 1);
  CHECK(rlock::lock::merge_majority({a, c, c}, 2, 20).events.empty());
}

TEST_CASE("render_history: escapes values, says Redisson, JSON has a schema") {
  History h = of({event(1'700'000'000'123, "acquired", "o\x1b[31m")});
  rlock::cli::HistoryView view;
  view.utc = true;
  auto text = rlock::cli::render_history("n", h, view);
  CHECK(text.find("2023-11-14T22:13:20.123Z  acquired owner=\"o\\x1b[31m\"") == 0);
  CHECK(text.find('\x1b') == std::string::npos);
  h.redisson = true;
  h.events.clear();
  CHECK(rlock::cli::render_history("n", h, view).find("made by Redisson: no history") != std::string::npos);
  view.json = true;
  CHECK(rlock::cli::render_history("n", h, view).find("\"schema\":1") != std::string::npos);
}

// Issue 43: a force-unlocked event says whose hold ended (owner) apart from
// who removed it (the remover's host, pid, cmd, ver: by_*), also for events
// recorded before the change (the stored fields are the same).
TEST_CASE("render_history: a force-unlocked event names the removed hold, then who removed it") {
  auto removed = event(1'700'000'000'123, "force-unlocked", "uuid:4242", "", "21");
  removed.fields = {{"owner", "uuid:4242"}, {"host", "ops-1"},
                    {"pid", "777"},         {"cmd", "rlock force-unlock ***"},
                    {"ver", "0.1.0"},       {"held_ms", "21"}};
  auto taken = event(1'700'000'000'100, "acquired", "uuid:4242");
  rlock::cli::HistoryView view;
  view.utc = true;
  auto text = rlock::cli::render_history("n", of({taken, removed}), view);
  CHECK(text.find("acquired owner=uuid:4242 host=h pid=1\n") != std::string::npos);
  CHECK(text.find("force-unlocked owner=uuid:4242 held_ms=21 by_host=ops-1 by_pid=777 "
                  "by_cmd=\"rlock force-unlock ***\" by_ver=0.1.0\n") != std::string::npos);
  CHECK(text.find(" host=ops-1") == std::string::npos);
  view.json = true; // JSON keeps the fields as stored
  auto json = rlock::cli::render_history("n", of({removed}), view);
  CHECK(json.find("\"host\":\"ops-1\"") != std::string::npos);
}

TEST_CASE("decode_history: whether the history key can be written, so an empty history is never misread (issue 30)") {
  using rlock::lock::LogAccess;
  auto with = [](rlock::redis::Reply log_type, long long writable) {
    return rlock::lock::decode_history(
        array({array({}), str("hash"), integer(0), std::move(log_type), integer(writable), integer(1)}));
  };
  CHECK(with(str("stream"), 1).access == LogAccess::writable);
  CHECK(with(str("none"), 1).access == LogAccess::writable);
  CHECK(with(str("none"), -1).access == LogAccess::unknown); // before Redis 7.0: cannot tell
  CHECK(with(str("stream"), 0).access == LogAccess::no_write);
  auto string_key = with(str("string"), 1);
  CHECK(string_key.access == LogAccess::not_stream);
  CHECK(string_key.log_type == rlock::lock::KeyType::string);
  CHECK(with(rlock::redis::Reply{}, -1).access == LogAccess::no_read); // the key was not given: refused
  CHECK(with(str("stream"), 1).ours);
  // An older script's answer (three elements): nothing said, nothing assumed.
  CHECK(rlock::lock::decode_history(array({array({}), str("none"), integer(0)})).access == LogAccess::unknown);
  // A Redlock: the least access any master gives.
  auto merged = rlock::lock::merge_majority({with(str("stream"), 1), with(str("string"), 1)}, 2, 20);
  CHECK(merged.access == LogAccess::not_stream);
}
