#include <rlock/core/proc.hpp>
#include <rlock/lock/liveness.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

using rlock::ProcessStart;
using rlock::lock::judge_holder;
using rlock::lock::LockState;
using rlock::lock::parse_holder_record;
using rlock::lock::ThisHost;

namespace {

// A held exclusive lock whose record is `raw`.
LockState held(const std::string& raw) {
  LockState state;
  state.name = "job";
  state.type = rlock::lock::KeyType::hash;
  state.layout = rlock::lock::Layout::exclusive;
  state.ttl = rlock::Millis(30'000);
  state.owners = {{"tok", 1}};
  state.record_raw = raw;
  state.record = parse_holder_record(raw);
  return state;
}

const ThisHost k_here{"box", "boot-1"};
const std::string k_record =
    R"({"host":"box","pid":4242,"boot_id":"boot-1","start_ticks":1000,"command":"make"})";

// A probe that knows one process.
rlock::lock::ProcessProbe one(long long pid, ProcessStart start) {
  return [=](long long asked) { return asked == pid ? std::optional<ProcessStart>(start) : std::nullopt; };
}

rlock::lock::ProcessProbe nobody() {
  return [](long long) { return std::optional<ProcessStart>(); };
}

} // namespace

TEST_CASE("liveness: a pid that is gone, finished or reused is proof") {
  auto v = judge_holder(held(k_record), k_here, nobody());
  CHECK(v.gone);
  CHECK(v.why == "pid 4242 is gone");
  v = judge_holder(held(k_record), k_here, one(4242, {'Z', 1000}));
  CHECK(v.gone);
  v = judge_holder(held(k_record), k_here, one(4242, {'S', 5000}));
  CHECK(v.gone);
  CHECK(v.why.find("another process now") != std::string::npos);
}

TEST_CASE("liveness: the same process still running is alive") {
  auto v = judge_holder(held(k_record), k_here, one(4242, {'S', 1000}));
  CHECK_FALSE(v.gone);
  CHECK(v.alive);
  CHECK(v.why == "alive: pid 4242 (make) still runs");
}

TEST_CASE("liveness: another host or boot, no record, or no start time is no proof") {
  CHECK_FALSE(judge_holder(held(k_record), ThisHost{"other", "boot-1"}, nobody()).gone);
  auto v = judge_holder(held(k_record), ThisHost{"box", "boot-2"}, nobody());
  CHECK_FALSE(v.gone);
  CHECK(v.why.find("another boot") != std::string::npos);
  CHECK_FALSE(judge_holder(held(k_record), ThisHost{"box", ""}, nobody()).gone);

  auto no_record = held("");
  no_record.record.reset();
  v = judge_holder(no_record, k_here, nobody());
  CHECK_FALSE(v.gone);
  CHECK(v.why.find("no holder record") != std::string::npos);
  v = judge_holder(held("not json"), k_here, nobody());
  CHECK_FALSE(v.gone);
  CHECK(v.why == "unreadable holder record");
  CHECK_FALSE(judge_holder(held(R"({"pid":4242})"), k_here, nobody()).gone);   // no host
  CHECK_FALSE(judge_holder(held(R"({"host":"box"})"), k_here, nobody()).gone); // no pid

  // An older record without a start time: a running pid may be a reused one.
  const std::string old = R"({"host":"box","pid":4242})";
  CHECK_FALSE(judge_holder(held(old), k_here, one(4242, {'S', 1})).gone);
  CHECK(judge_holder(held(old), k_here, nobody()).gone);
}

TEST_CASE("liveness: shared layouts, foreign keys and several owners are not judged") {
  auto state = held(k_record);
  state.layout = rlock::lock::Layout::read;
  CHECK_FALSE(judge_holder(state, k_here, nobody()).gone);
  state.layout = rlock::lock::Layout::semaphore;
  CHECK_FALSE(judge_holder(state, k_here, nobody()).gone);
  state = held(k_record);
  state.type = rlock::lock::KeyType::string;
  state.layout = rlock::lock::Layout::none;
  CHECK_FALSE(judge_holder(state, k_here, nobody()).gone);
  state = held(k_record);
  state.owners.emplace_back("other", 1);
  CHECK_FALSE(judge_holder(state, k_here, nobody()).gone);
  state = held(k_record);
  state.layout = rlock::lock::Layout::fair;
  CHECK(judge_holder(state, k_here, nobody()).gone);
}

TEST_CASE("proc: /proc/PID/stat gives the state, the parent and the start time (field 22)") {
  auto s = rlock::parse_process_start("4242 (my (odd) cmd) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
                                      "1 0 987654 1000 10 18446744073709551615");
  REQUIRE(s);
  CHECK(s->state == 'S');
  CHECK(s->parent == 17);
  CHECK(s->start_ticks == 987654);
  CHECK_FALSE(rlock::parse_process_start("12 (x) S x1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 1")); // no parent
  CHECK_FALSE(s->finished());
  CHECK_FALSE(rlock::parse_process_start(""));
  CHECK_FALSE(rlock::parse_process_start("12 (x) S 1 2 3"));
  CHECK_FALSE(rlock::parse_process_start("12 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -5 1"));
  auto self = rlock::process_start(getpid());
  REQUIRE(self);
  CHECK(self->parent == getppid());
  CHECK(self->start_ticks > 0);
  CHECK_FALSE(rlock::boot_id().empty());
}

// Issue 19, defect 3: a `run` re-entering a plain acquire's token renews a
// hold whose record may name a process that has exited.
TEST_CASE("liveness: a renewal within the last lease is proof of life, whoever the record names") {
  const std::string renewed =
      R"({"host":"box","pid":4242,"boot_id":"boot-1","start_ticks":1000,"ttl_ms":3000,"renewed_at_ms":100000})";
  auto state = held(renewed);
  state.server_now_ms = 102'999; // 2.999s after the renewal, lease 3s
  auto v = judge_holder(state, k_here, nobody());
  CHECK_FALSE(v.gone);
  CHECK(v.why.find("renewed") != std::string::npos);
  CHECK(v.why.find("pid 4242 is gone") != std::string::npos);
  state.server_now_ms = 103'000; // a whole lease since the last renewal: no longer proof
  CHECK(judge_holder(state, k_here, nobody()).gone);
  // No ttl_ms recorded: Redisson's default lease, 30s.
  auto no_ttl = held(R"({"host":"box","pid":4242,"boot_id":"boot-1","start_ticks":1000,"renewed_at_ms":100000})");
  no_ttl.server_now_ms = 129'999;
  CHECK_FALSE(judge_holder(no_ttl, k_here, nobody()).gone);
  no_ttl.server_now_ms = 130'000;
  CHECK(judge_holder(no_ttl, k_here, nobody()).gone);
  // Without the server's time nothing is known about the renewal's age: the
  // process decides, as before.
  auto no_now = held(renewed);
  CHECK(judge_holder(no_now, k_here, nobody()).gone);
  // A live process is alive whatever the renewal says.
  state.server_now_ms = 500'000;
  CHECK(judge_holder(state, k_here, one(4242, {'S', 1000})).alive);
}
