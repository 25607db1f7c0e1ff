#include <rlock/cli/check.hpp>
#include <rlock/cli/check_judge.hpp>
#include <rlock/cli/metrics.hpp>
#include <rlock/lock/record.hpp>

#include <doctest/doctest.h>

#include <set>

#include <string>

using rlock::Millis;
using rlock::cli::check_line;
using rlock::cli::CheckSpec;
using rlock::cli::CheckState;
using rlock::cli::judge_lock;
using rlock::cli::Problem;
using rlock::cli::worse;
using rlock::lock::HolderVerdict;
using rlock::lock::LockState;

namespace {

// 2026-11-24T00:00:00Z on the server's clock.
constexpr long long k_now = 1'795'478'400'000;
constexpr long long k_min = 60'000;

// A lock held for `held_ms` (rlock record), lease `ttl_ms` (-1: no expiry).
LockState held_for(long long held_ms, long long ttl_ms = 30'000) {
  LockState state;
  state.name = "job";
  state.type = rlock::lock::KeyType::hash;
  state.layout = rlock::lock::Layout::exclusive;
  state.ttl = Millis(ttl_ms);
  state.owners = {{"tok", 1}};
  state.server_now_ms = k_now;
  state.record_raw = R"({"host":"box","pid":42,"acquired_at_ms":)" + std::to_string(k_now - held_ms) + "}";
  state.record = rlock::lock::parse_holder_record(state.record_raw);
  return state;
}

LockState free_lock() {
  LockState state;
  state.name = "job";
  state.type = rlock::lock::KeyType::none;
  state.server_now_ms = k_now;
  return state;
}

CheckSpec held_longer(long long warn_ms, long long crit_ms) {
  CheckSpec spec;
  spec.held_longer = {Millis(warn_ms), Millis(crit_ms)};
  return spec;
}

} // namespace

TEST_CASE("check: states rank OK < UNKNOWN < WARNING < CRITICAL (max_state_alt)") {
  CHECK(worse(CheckState::ok, CheckState::unknown) == CheckState::unknown);
  CHECK(worse(CheckState::unknown, CheckState::warning) == CheckState::warning);
  CHECK(worse(CheckState::critical, CheckState::warning) == CheckState::critical);
  CHECK(worse(CheckState::critical, CheckState::unknown) == CheckState::critical);
  CHECK(static_cast<int>(CheckState::unknown) == 3);
}

TEST_CASE("check --held-longer: over WARN is WARNING, over CRIT is CRITICAL, exactly at it is not") {
  auto spec = held_longer(10 * k_min, 60 * k_min);
  CHECK(judge_lock(held_for(5 * k_min), spec, {}).state == CheckState::ok);
  CHECK(judge_lock(held_for(10 * k_min), spec, {}).state == CheckState::ok);
  auto v = judge_lock(held_for(10 * k_min + 1), spec, {});
  CHECK(v.state == CheckState::warning);
  REQUIRE(v.findings.size() == 1);
  CHECK(v.findings[0].problem == Problem::held_too_long);
  CHECK(v.findings[0].limit == Millis(10 * k_min));
  v = judge_lock(held_for(61 * k_min), spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].limit == Millis(60 * k_min));
  CHECK(v.figures.held_for == Millis(61 * k_min));
  // Free: nothing to judge.
  CHECK(judge_lock(free_lock(), spec, {}).state == CheckState::ok);
}

TEST_CASE("check --held-longer: a held lock with no acquisition time, or no server clock, is UNKNOWN") {
  auto spec = held_longer(k_min, 2 * k_min);
  auto redisson = held_for(0);
  redisson.record.reset();
  redisson.record_raw.clear();
  auto v = judge_lock(redisson, spec, {});
  CHECK(v.state == CheckState::unknown);
  CHECK(v.findings[0].problem == Problem::held_since_unknown);
  auto no_clock = held_for(5 * k_min);
  no_clock.server_now_ms.reset();
  CHECK(judge_lock(no_clock, spec, {}).findings[0].problem == Problem::no_server_time);
}

TEST_CASE("check --held-longer: a read-write lock counts from its oldest reader") {
  auto state = held_for(0);
  state.layout = rlock::lock::Layout::read;
  state.record.reset();
  rlock::lock::HolderView reader;
  reader.record =
      rlock::lock::parse_holder_record(R"({"acquired_at_ms":)" + std::to_string(k_now - 90 * k_min) + "}");
  state.holders = {reader};
  CHECK(judge_lock(state, held_longer(k_min, 80 * k_min), {}).state == CheckState::critical);
}

TEST_CASE("check --dead-holder: CRITICAL exactly when the liveness verdict says gone") {
  CheckSpec spec;
  spec.dead_holder = true;
  auto v = judge_lock(held_for(k_min), spec, HolderVerdict{true, false, "pid 42 is gone"});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].detail == "pid 42 is gone");
  CHECK(judge_lock(held_for(k_min), spec, HolderVerdict{false, true, "alive"}).state == CheckState::ok);
  CHECK(judge_lock(held_for(k_min), spec, HolderVerdict{false, false, "another host"}).state ==
        CheckState::ok);
  CHECK(judge_lock(held_for(k_min), spec, std::nullopt).state == CheckState::ok);
  // Without the flag a gone holder is not judged.
  CHECK(judge_lock(held_for(k_min), CheckSpec{}, HolderVerdict{true, false, "gone"}).state == CheckState::ok);
}

TEST_CASE("check --waiters: more than WARN / CRIT queued") {
  CheckSpec spec;
  spec.waiters = {1, 2};
  auto state = held_for(k_min);
  CHECK(judge_lock(state, spec, {}).state == CheckState::ok);
  state.waiters.resize(1);
  CHECK(judge_lock(state, spec, {}).state == CheckState::ok);
  state.waiters.resize(2);
  CHECK(judge_lock(state, spec, {}).state == CheckState::warning);
  state.waiters.resize(3);
  auto v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].count == 3);
  CHECK(v.findings[0].limit_count == 2);
}

TEST_CASE("check --ttl-none: CRITICAL for a held key without expiry only") {
  CheckSpec spec;
  spec.ttl_none = true;
  CHECK(judge_lock(held_for(k_min), spec, {}).state == CheckState::ok);
  auto v = judge_lock(held_for(k_min, -1), spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.figures.no_expiry);
  CHECK(!v.figures.ttl);
  CHECK(judge_lock(free_lock(), spec, {}).state == CheckState::ok);
}

TEST_CASE("check --done-within: CRITICAL when the last completion is older than DUR, or none") {
  CheckSpec spec;
  spec.done_within = Millis(26 * 60 * k_min);
  auto state = free_lock();
  auto v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].problem == Problem::never_done);
  state.last_done = rlock::lock::parse_done_record(
      R"({"done_at_ms":)" + std::to_string(k_now - 25 * 60 * k_min) + "}", 1000);
  v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::ok);
  CHECK(v.figures.done_ago == Millis(25 * 60 * k_min));
  state.last_done = rlock::lock::parse_done_record(
      R"({"done_at_ms":)" + std::to_string(k_now - 27 * 60 * k_min) + "}", 1000);
  v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].problem == Problem::done_too_long_ago);
  // A record that cannot be read proves nothing.
  state.last_done = rlock::lock::parse_done_record("junk", 1000);
  v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings[0].detail == "unreadable");
}

TEST_CASE("check: several findings on one lock, the worst decides") {
  auto spec = held_longer(k_min, 60 * k_min);
  spec.ttl_none = true;
  auto v = judge_lock(held_for(2 * k_min, -1), spec, {});
  CHECK(v.state == CheckState::critical);
  CHECK(v.findings.size() == 2);
}

TEST_CASE("check_line: one line, the state word, perfdata after the only '|'") {
  auto spec = held_longer(k_min, 60 * k_min);
  std::vector<LockState> states{held_for(2 * k_min), free_lock()};
  states[1].name = "other";
  std::vector<rlock::cli::LockVerdict> verdicts{judge_lock(states[0], spec, {}),
                                                judge_lock(states[1], spec, {})};
  auto line = check_line(states, verdicts, spec, true);
  CHECK(line.starts_with("RLOCK WARNING - \"job\": held 2m (over 1m) (2 locks checked, 1 held) |"));
  CHECK(line.find("'job held'=120s;60;3600;0;") != std::string::npos);
  CHECK(line.find("'job ttl'=30s;;;0;") != std::string::npos);
  CHECK(line.find("'job waiters'=0;;;0;") != std::string::npos);
  CHECK(line.find("'job renewed_age'=120s;;;0;") != std::string::npos);
  CHECK(line.find("'other held'=0s;60;3600;0;") != std::string::npos);
  CHECK(line.find("'other renewed_age'=U;;;0;") != std::string::npos);
  CHECK(line.find("done_age") == std::string::npos);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  // All OK, one lock.
  std::vector<LockState> one{held_for(5000)};
  auto ok = check_line(one, {judge_lock(one[0], spec, {})}, spec, true);
  CHECK(ok.starts_with("RLOCK OK - \"job\": held 5s |"));
  CHECK(check_line({}, {}, spec, false).starts_with("RLOCK OK - no locks found |"));
}

TEST_CASE("check_line: hostile names stay on one line and out of the perfdata syntax") {
  CheckSpec spec;
  spec.ttl_none = true;
  auto state = held_for(k_min, -1);
  state.name = "a'b=c|d\ne\"f\\g";
  auto line = check_line({state}, {judge_lock(state, spec, {})}, spec, true);
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(std::count(line.begin(), line.end(), '|') == 1);
  CHECK(line.starts_with(R"(RLOCK CRITICAL - "a'b=c\x7cd\ne\"f\\g": held without an expiry)"));
  CHECK(line.find(R"('a''b\x3dc\x7cd\ne\"f\\g held'=60s;;;0;)") != std::string::npos);
  CHECK(line.find(R"('a''b\x3dc\x7cd\ne\"f\\g ttl'=U;;;0;)") != std::string::npos);
  // 4 KB: cut to 200 bytes and marked.
  state.name = std::string(4096, 'x');
  line = check_line({state}, {judge_lock(state, spec, {})}, spec, true);
  CHECK(line.find(std::string(200, 'x') + "...\"") != std::string::npos);
  CHECK(line.find(std::string(201, 'x')) == std::string::npos);
  CHECK(line.size() < 2000);
}

TEST_CASE("check_unknown-style perf_label doubles quotes") {
  CHECK(rlock::cli::perf_label("it's", "held") == "'it''s held'");
}

TEST_CASE("openmetrics: HELP and TYPE, samples per lock, escaped labels, # EOF") {
  auto held = held_for(90'000);
  held.waiters.resize(2);
  held.record->renewed_at_ms = k_now - 4000;
  auto never = held_for(1000, -1);
  never.name = "q\"\\\nx\xff";
  auto done = free_lock();
  done.name = "nightly";
  done.last_done = rlock::lock::parse_done_record(R"({"done_at_ms":1795478400123})", 1000);
  auto text = rlock::cli::openmetrics_text({held, never, done});
  CHECK(text.find("# HELP rlock_lock_held ") != std::string::npos);
  CHECK(text.find("# TYPE rlock_lock_held gauge\n") != std::string::npos);
  CHECK(text.find("rlock_lock_held{name=\"job\"} 1\n") != std::string::npos);
  CHECK(text.find("rlock_lock_held{name=\"nightly\"} 0\n") != std::string::npos);
  CHECK(text.find("rlock_lock_held_seconds{name=\"job\"} 90.000\n") != std::string::npos);
  CHECK(text.find("rlock_lock_ttl_seconds{name=\"job\"} 30.000\n") != std::string::npos);
  CHECK(text.find(R"(rlock_lock_ttl_seconds{name="q\"\\\\\nx\\xff"} +Inf)" "\n") != std::string::npos);
  CHECK(text.find("rlock_lock_waiters{name=\"job\"} 2\n") != std::string::npos);
  CHECK(text.find("rlock_lock_renewed_age_seconds{name=\"job\"} 4.000\n") != std::string::npos);
  CHECK(text.find("rlock_job_last_done_timestamp_seconds{name=\"nightly\"} 1795478400.123\n") !=
        std::string::npos);
  CHECK(text.find("rlock_lock_info{name=\"job\",kind=\"rlock\",mode=\"exclusive\",holder_host=\"box\",holder_"
                  "pid=\"42\"") != std::string::npos);
  CHECK(text.find("rlock_lock_info{name=\"nightly\"") == std::string::npos);
  CHECK(text.ends_with("\n# EOF\n"));
  CHECK(rlock::cli::metric_label_value("a\"b\\c\nd") == R"(a\"b\\\\c\nd)");
}

TEST_CASE("metric labels: distinct names give distinct labels; a name given twice is one series (issue 30)") {
  using rlock::cli::metric_label_value;
  // Not UTF-8: the byte as the text \xNN, a backslash doubled (so no name spells it); U+FFFD is itself.
  CHECK(metric_label_value("x\xff") == R"(x\\xff)");
  CHECK(metric_label_value("x\\xff") == R"(x\\\\xff)");
  CHECK(metric_label_value("x\xEF\xBF\xBD") == "x\xEF\xBF\xBD");
  std::set<std::string> labels;
  for (std::string name : {"x\xff", "x\xfe", "x\xEF\xBF\xBD", "x\\xff", "x\\\\xff", "x", "x\\"}) {
    CAPTURE(name);
    CHECK(labels.insert(metric_label_value(name)).second);
  }
  LockState a;
  a.name = "rd";
  a.type = rlock::lock::KeyType::none;
  auto text = rlock::cli::openmetrics_text({a, a});
  std::size_t count = 0;
  for (auto at = text.find(R"(rlock_lock_held{name="rd"})"); at != std::string::npos;
       at = text.find(R"(rlock_lock_held{name="rd"})", at + 1)) {
    ++count;
  }
  CHECK(count == 1);
}

TEST_CASE("check --ttl-none: a semaphore's key has no expiry by design; its permits' leases count") {
  LockState state;
  state.name = "sem";
  state.type = rlock::lock::KeyType::string;
  state.layout = rlock::lock::Layout::semaphore;
  state.ttl = Millis(-1);
  state.server_now_ms = k_now;
  rlock::lock::HolderView permit;
  permit.owner = "p1";
  permit.ttl = Millis(40'000);
  permit.record =
      rlock::lock::parse_holder_record(R"({"acquired_at_ms":)" + std::to_string(k_now - 5000) +
                                       R"(,"renewed_at_ms":)" + std::to_string(k_now - 2000) + "}");
  rlock::lock::HolderView older = permit;
  older.ttl = Millis(10'000);
  older.record =
      rlock::lock::parse_holder_record(R"({"acquired_at_ms":)" + std::to_string(k_now - 9000) + "}");
  state.holders = {older, permit};
  CheckSpec spec;
  spec.ttl_none = true;
  auto v = judge_lock(state, spec, {});
  CHECK(v.state == CheckState::ok);
  CHECK(!v.figures.no_expiry);
  CHECK(v.figures.ttl == Millis(40'000));       // the last permit's lease end frees it
  CHECK(v.figures.held_for == Millis(9000));    // the oldest permit
  CHECK(v.figures.renewed_ago == Millis(2000)); // the latest renewal among the holders
  // A permit without a lease (-1) is a lock that never frees itself.
  state.holders[0].ttl = Millis(-1);
  CHECK(judge_lock(state, spec, {}).state == CheckState::critical);
}
