#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>

#include <doctest/doctest.h>

using rlock::Millis;

namespace {
rlock::lock::LockState held_state() {
  rlock::lock::LockState state;
  state.name = "deploy\n1";
  state.type = rlock::lock::KeyType::hash;
  state.ttl = Millis(29'500);
  state.owners = {{"tok:1", 2}};
  state.record = rlock::lock::parse_holder_record(
      R"({"host":"h1","pid":42,"command":"./deploy.sh","acquired_at_ms":1700000000000,)"
      R"("ttl_ms":30000,"fence":7,"version":"0.1.0"})");
  return state;
}
} // namespace

TEST_CASE("status JSON has the documented stable fields") {
  auto doc = rlock::cli::status_json(held_state());
  CHECK(doc["name"] == "deploy\n1");
  CHECK(doc["held"] == true);
  CHECK(doc["type"] == "hash");
  CHECK(doc["foreign"] == false);
  CHECK(doc["ttl_ms"] == 29'500);
  CHECK(doc["owner"] == "tok:1");
  CHECK(doc["count"] == 2);
  CHECK(doc["owners"][0]["owner"] == "tok:1");
  CHECK(doc["fence"] == 7);
  CHECK(doc["holder"]["host"] == "h1");
  CHECK(doc["holder"]["pid"] == 42);
  CHECK(doc["holder"]["command"] == "./deploy.sh");
  CHECK(doc["holder"]["acquired_at_ms"] == 1700000000000LL);
  CHECK(doc["holder"]["acquired_at"] == "2023-11-14T22:13:20Z");
  CHECK(doc["holder"]["ttl_ms"] == 30000);
  CHECK(doc["holder"]["version"] == "0.1.0");
}

TEST_CASE("status JSON of a free lock and of a foreign key") {
  rlock::lock::LockState free_state;
  free_state.name = "x";
  free_state.type = rlock::lock::KeyType::none;
  auto doc = rlock::cli::status_json(free_state);
  CHECK(doc["held"] == false);
  CHECK(doc["type"].is_null());
  CHECK(doc["ttl_ms"].is_null());
  CHECK(doc["owner"].is_null());
  CHECK(doc["holder"].is_null());

  rlock::lock::LockState foreign;
  foreign.name = "x";
  foreign.type = rlock::lock::KeyType::string;
  foreign.ttl = Millis(-1);
  doc = rlock::cli::status_json(foreign);
  CHECK(doc["held"] == true);
  CHECK(doc["foreign"] == true);
  CHECK(doc["ttl_ms"] == -1);
}

TEST_CASE("status lines are one line per lock") {
  auto line = rlock::cli::status_line(held_state());
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("deploy\\n1: held by tok:1 (count 2), 29.5s left, fence 7") == 0);
}

TEST_CASE("a partial or unreadable record renders what it says, never throws") {
  auto state = held_state();
  state.record = rlock::lock::parse_holder_record(R"({"host":null,"pid":"x","command":123,"fence":7})");
  auto doc = rlock::cli::status_json(state);
  CHECK(doc["fence"] == 7);
  CHECK(doc["holder"]["host"].is_null());
  CHECK(doc["holder"]["pid"].is_null());
  CHECK(doc["holder"]["command"].is_null());
  CHECK(doc["holder"]["acquired_at"].is_null());
  CHECK(rlock::cli::status_line(state) == "deploy\\n1: held by tok:1 (count 2), 29.5s left, fence 7");

  state.record = rlock::lock::parse_holder_record("not json");
  doc = rlock::cli::status_json(state);
  CHECK(doc["fence"].is_null());
  CHECK(doc["holder"].is_object());
  CHECK(rlock::cli::status_line(state).ends_with("holder unknown (unreadable rlock:meta)"));

  state.record.reset(); // a Redisson-made lock: no record at all
  CHECK(rlock::cli::status_json(state)["holder"].is_null());
}

TEST_CASE("the busy phrase says what the record says, or that the holder is unknown") {
  rlock::lock::Holder holder{"tok:1", rlock::lock::KeyType::hash, Millis(1500), std::nullopt};
  CHECK(rlock::cli::holder_phrase(holder) == "held by tok:1, 1.5s left");
  holder.record = rlock::lock::parse_holder_record(R"({"host":"h1","pid":42,"command":"x y"})");
  CHECK(rlock::cli::holder_phrase(holder) == R"(held by tok:1 on h1 (pid 42, "x y"), 1.5s left)");
  holder.record = rlock::lock::parse_holder_record(R"({"pid":42})");
  CHECK(rlock::cli::holder_phrase(holder) == "held by tok:1 on an unknown host (pid 42), 1.5s left");
  holder.record = rlock::lock::parse_holder_record("[1,2]");
  CHECK(rlock::cli::holder_phrase(holder) ==
        "held by tok:1 (holder unknown: unreadable rlock:meta), 1.5s left");
  holder.owner.clear();
  CHECK(rlock::cli::holder_phrase(holder).starts_with("held by an unknown owner"));
}

TEST_CASE("status of each mode's layout: readers, permits and the fair queue") {
  rlock::lock::LockState rw;
  rw.name = "db";
  rw.type = rlock::lock::KeyType::hash;
  rw.layout = rlock::lock::Layout::read;
  rw.ttl = Millis(9'000);
  rw.owners = {{"r1", 2}, {"r2", 1}};
  rw.holders = {{"r1", 2, Millis(9'000), rlock::lock::parse_holder_record(R"({"host":"h1","pid":7})")},
                {"r2", 1, Millis(4'000), std::nullopt}};
  auto line = rlock::cli::status_line(rw);
  CHECK(line == "db: read-write lock held for reading, 9s left; 2 readers: r1 (count 2, 9s left, host h1, pid 7); "
                "r2 (4s left)");
  auto doc = rlock::cli::status_json(rw);
  CHECK(doc["mode"] == "read");
  CHECK(doc["holders"].size() == 2);
  CHECK(doc["holders"][1]["ttl_ms"] == 4'000);
  CHECK(doc["holders"][0]["holder"]["host"] == "h1");
  CHECK(doc["waiters"].empty());

  rlock::lock::LockState sem;
  sem.name = "pool";
  sem.type = rlock::lock::KeyType::string;
  sem.layout = rlock::lock::Layout::semaphore;
  sem.ttl = Millis(-1);
  sem.permits_free = 1;
  sem.holders = {{"p1", 1, Millis(2'500), std::nullopt}};
  CHECK(sem.held());
  CHECK(rlock::cli::status_line(sem) == "pool: semaphore, 1 permit held, 1 free: p1 (2.5s left)");
  auto sdoc = rlock::cli::status_json(sem);
  CHECK(sdoc["foreign"] == false);
  CHECK(sdoc["permits_free"] == 1);
  sem.holders.clear();
  CHECK_FALSE(sem.held());
  CHECK(rlock::cli::status_line(sem) == "pool: semaphore, no permit held, 1 free");

  auto fair = held_state();
  fair.layout = rlock::lock::Layout::fair;
  fair.record.reset();
  fair.waiters = {{"w1", Millis(7'000), rlock::lock::parse_holder_record(R"({"host":"h2","pid":9,"since_ms":1})"),
                   Millis(3'000)},
                  {"w2", std::nullopt, std::nullopt, std::nullopt}};
  CHECK(rlock::cli::status_line(fair) ==
        "deploy\\n1: fair lock held by tok:1 (count 2), 29.5s left, no rlock record (a Redisson client's); 2 waiting in order: w1 (for 3s, host h2, pid 9), w2");
  auto fdoc = rlock::cli::status_json(fair);
  CHECK(fdoc["waiters"][0]["owner"] == "w1");
  CHECK(fdoc["waiters"][0]["waited_ms"] == 3'000);
  CHECK(fdoc["waiters"][0]["gives_up_in_ms"] == 7'000);
  CHECK(fdoc["waiters"][1]["waited_ms"].is_null());
}

TEST_CASE("status kinds: rlock, redisson, fair, read-write, semaphore, foreign, none when free") {
  auto state = held_state();
  CHECK(rlock::cli::lock_kind(state) == "rlock");
  CHECK(rlock::cli::status_json(state)["kind"] == "rlock");
  state.record.reset();
  CHECK(rlock::cli::lock_kind(state) == "redisson");
  CHECK(rlock::cli::status_line(state).ends_with(", no rlock record (a Redisson client's)"));
  state.layout = rlock::lock::Layout::fair;
  CHECK(rlock::cli::lock_kind(state) == "fair");
  state.layout = rlock::lock::Layout::write;
  CHECK(rlock::cli::lock_kind(state) == "read-write");
  state.layout = rlock::lock::Layout::semaphore;
  CHECK(rlock::cli::lock_kind(state) == "semaphore");
  CHECK(rlock::cli::status_json(state)["kind"] == "semaphore"); // even with no permit out
  state.layout = rlock::lock::Layout::none;
  state.type = rlock::lock::KeyType::string;
  CHECK(rlock::cli::lock_kind(state) == "foreign");
  state.type = rlock::lock::KeyType::none;
  CHECK(rlock::cli::lock_kind(state).empty());
  CHECK(rlock::cli::status_json(state)["kind"].is_null());
}

TEST_CASE("last completion of run --once-per: status line and JSON") {
  auto state = held_state();
  CHECK(rlock::cli::last_done_line(state).empty());
  CHECK(rlock::cli::status_json(state)["last_done"].is_null());
  state.last_done = rlock::lock::parse_done_record(
      R"({"window_start_ms":1795478400000,"window_end_ms":1795564800000,"host":"h2","pid":12,)"
      R"("command":"backup.sh","done_at_ms":1795489200000,"exit":0})",
      75'600'000);
  CHECK(rlock::cli::done_phrase(*state.last_done) ==
        R"(by host h2 pid 12 ("backup.sh") at 2026-11-24T03:00:00Z, exit 0)");
  CHECK(rlock::cli::last_done_line(state) ==
        R"(  last done: by host h2 pid 12 ("backup.sh") at 2026-11-24T03:00:00Z, exit 0 )"
        "(window 2026-11-24T00:00:00Z .. 2026-11-25T00:00:00Z), record expires in 21h");
  auto doc = rlock::cli::status_json(state)["last_done"];
  CHECK(doc["window_start"] == "2026-11-24T00:00:00Z");
  CHECK(doc["window_end"] == "2026-11-25T00:00:00Z");
  CHECK(doc["at"] == "2026-11-24T03:00:00Z");
  CHECK(doc["at_ms"] == 1'795'489'200'000);
  CHECK(doc["host"] == "h2");
  CHECK(doc["pid"] == 12);
  CHECK(doc["cmd"] == "backup.sh");
  CHECK(doc["exit"] == 0);
  CHECK(doc["readable"] == true);
  // Forged or broken: what cannot be read is null / left out, never a crash.
  state.last_done = rlock::lock::parse_done_record("\x01not json", -1);
  CHECK(rlock::cli::done_phrase(*state.last_done) == "by an unreadable record");
  CHECK(rlock::cli::last_done_line(state) == "  last done: by an unreadable record");
  doc = rlock::cli::status_json(state)["last_done"];
  CHECK(doc["readable"] == false);
  CHECK(doc["host"].is_null());
  CHECK(doc["at"].is_null());
  CHECK(doc["expires_in_ms"].is_null());
  state.last_done = rlock::lock::parse_done_record(R"({"host":"bad\nhost","done_at_ms":0})", 5);
  CHECK(rlock::cli::done_phrase(*state.last_done).find('\n') == std::string::npos);
}
