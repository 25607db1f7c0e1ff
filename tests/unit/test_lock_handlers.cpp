// The protocol steps the subcommands call (lock/if_dead, lock/several's
// renew_all, run/acquire's --if-unavailable decision and --once-per check),
// on an in-memory store: what they decide from what happened.

#include "memory_store.hpp"

#include <rlock/lock/if_dead.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/run/acquire.hpp>

#include <doctest/doctest.h>

using namespace rlock;
using rlock::test::MemoryStore;

namespace {

constexpr long long k_day = 86'400'000;
constexpr long long k_nov24 = 1'795'478'400'000; // 2026-11-24T00:00:00Z

lock::AcquireRequest request_for(const std::string& owner, const std::string& name = "job") {
  lock::AcquireRequest request;
  request.keys = lock::keys_for(name);
  request.owner = owner;
  return request;
}

run::RunSpec once_per_spec(const std::vector<std::string>& names, const std::string& owner) {
  run::RunSpec spec;
  spec.request = request_for(owner, names.front());
  for (const auto& name : names) {
    spec.locks.push_back(lock::keys_for(name));
  }
  spec.once_per = Millis(k_day);
  spec.label = "run";
  return spec;
}

void hold(MemoryStore& store, const std::string& name, const std::string& owner) {
  REQUIRE(store.acquire(request_for(owner, name), nullptr, {}, {}).acquired);
}

lock::DoneRecord done_at(long long at_ms, long long ttl_ms = 1000) {
  lock::DoneRecord record;
  record.done_at_ms = at_ms;
  record.ttl_ms = ttl_ms;
  return record;
}

} // namespace

TEST_CASE("memory store: owner-checked release and renewal, re-entry, conditional removal") {
  MemoryStore store;
  hold(store, "A", "me");
  hold(store, "A", "me");
  CHECK(store.holds.at("A").count == 2);
  CHECK_FALSE(store.acquire(request_for("you", "A"), nullptr, {}, {}).acquired);
  auto keys = lock::keys_for("A");
  CHECK(store.release(keys, lock::Mode::exclusive, "you", false, redis::RetryPolicy::Mode::one_shot).check ==
        lock::OwnerCheck::other);
  CHECK(store.release(keys, lock::Mode::exclusive, "me", false, redis::RetryPolicy::Mode::one_shot).remaining == 1);
  CHECK(store.force_unlock_if(keys, {"you", "", ""}) == lock::ConditionalRemoval::changed);
  CHECK(store.force_unlock_if(keys, {"me", "", ""}) == lock::ConditionalRemoval::removed);
  CHECK(store.force_unlock_if(keys, {"me", "", ""}) == lock::ConditionalRemoval::gone);
}

// ---- run --once-per: done in the window, or not --------------------------------

TEST_CASE("check_once_per: no record: not done, the lock stays held") {
  MemoryStore store;
  hold(store, "job", "me");
  auto check = run::check_once_per(store, once_per_spec({"job"}, "me"));
  CHECK(check.verdict == lock::OnceVerdict::not_done);
  CHECK(check.window.start_ms == k_nov24);
  CHECK(store.holds.count("job") == 1);
}

TEST_CASE("check_once_per: done in this window: done, every lock released") {
  MemoryStore store;
  store.now_ms = k_nov24 + 5 * 3'600'000;
  hold(store, "job", "me");
  hold(store, "other", "me");
  store.done["job"] = done_at(k_nov24 + 3'600'000);
  auto check = run::check_once_per(store, once_per_spec({"job", "other"}, "me"));
  CHECK(check.verdict == lock::OnceVerdict::done);
  REQUIRE(check.last_done);
  CHECK(*check.last_done->done_at_ms == k_nov24 + 3'600'000);
  CHECK(check.window.start_ms == k_nov24);
  CHECK(store.holds.empty());
}

TEST_CASE("check_once_per: done in the previous window: not done, still held") {
  MemoryStore store;
  store.now_ms = k_nov24 + 60'000;
  hold(store, "job", "me");
  store.done["job"] = done_at(k_nov24 - 60'000);
  CHECK(run::check_once_per(store, once_per_spec({"job"}, "me")).verdict == lock::OnceVerdict::not_done);
  CHECK(store.holds.count("job") == 1);
}

TEST_CASE("check_once_per: a record that cannot be read (but expires): taken as done, released") {
  MemoryStore store;
  hold(store, "job", "me");
  lock::DoneRecord unreadable;
  unreadable.ttl_ms = 5000;
  store.done["job"] = unreadable;
  CHECK(run::check_once_per(store, once_per_spec({"job"}, "me")).verdict == lock::OnceVerdict::unreadable);
  CHECK(store.holds.empty());
}

TEST_CASE("check_once_per: the read fails: its error, after releasing") {
  MemoryStore store;
  hold(store, "job", "me");
  store.failing["inspect"] = RedisErrorKind::timeout;
  try {
    run::check_once_per(store, once_per_spec({"job"}, "me"));
    FAIL("no error");
  } catch (const RedisError& e) {
    CHECK(e.kind() == RedisErrorKind::timeout);
  }
  CHECK(store.holds.empty());
}

TEST_CASE("check_once_per: an answer without the server's time: a protocol error, after releasing") {
  MemoryStore store;
  hold(store, "job", "me");
  store.now_ms.reset();
  try {
    run::check_once_per(store, once_per_spec({"job"}, "me"));
    FAIL("no error");
  } catch (const RedisError& e) {
    CHECK(e.kind() == RedisErrorKind::protocol);
  }
  CHECK(store.holds.empty());
}

TEST_CASE("check_once_per: a release that fails is no error (the lock expires by its lease)") {
  MemoryStore store;
  hold(store, "job", "me");
  store.done["job"] = done_at(k_nov24 + 1);
  store.failing["release"] = RedisErrorKind::closed;
  CHECK(run::check_once_per(store, once_per_spec({"job"}, "me")).verdict == lock::OnceVerdict::done);
  CHECK(store.holds.count("job") == 1);
}

// ---- force-unlock --if-dead: the verdict leads to a removal or a refusal -------

namespace {

const lock::ThisHost k_here{"box", "boot-1"};

// `owner` holds "job", its record naming pid 42 started at tick 100 on this host.
void hold_as_process(MemoryStore& store, const std::string& owner) {
  hold(store, "job", owner);
  lock::HolderRecord record;
  record.host = "box";
  record.boot_id = "boot-1";
  record.pid = 42;
  record.start_ticks = 100;
  store.holds.at("job").record = record;
  store.holds.at("job").record_raw = "{\"pid\":42,\"owner\":\"" + owner + "\"}";
}

std::optional<ProcessStart> no_process(long long) {
  return std::nullopt;
}

lock::IfDeadResult if_dead(MemoryStore& store, const lock::LockState& before, const lock::ProcessProbe& probe) {
  return lock::force_unlock_if_dead(store, lock::keys_for("job"), before, k_here, probe);
}

} // namespace

TEST_CASE("force_unlock_if_dead: a free lock: nothing removed, no removal sent") {
  MemoryStore store;
  auto before = store.inspect({"job"}).front();
  auto result = if_dead(store, before, no_process);
  CHECK(result.outcome == lock::IfDeadOutcome::free);
  CHECK(std::count(store.calls.begin(), store.calls.end(), "force_unlock_if job") == 0);
}

TEST_CASE("force_unlock_if_dead: the holder still runs: refused, the lock stays") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  auto alive = [](long long pid) -> std::optional<ProcessStart> {
    CHECK(pid == 42);
    ProcessStart start;
    start.start_ticks = 100;
    return start;
  };
  auto result = if_dead(store, before, alive);
  CHECK(result.outcome == lock::IfDeadOutcome::not_proven);
  CHECK(result.verdict.alive);
  CHECK(store.holds.count("job") == 1);
  CHECK(std::count(store.calls.begin(), store.calls.end(), "force_unlock_if job") == 0);
}

TEST_CASE("force_unlock_if_dead: the holder is gone: removed") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  auto result = if_dead(store, before, no_process);
  CHECK(result.outcome == lock::IfDeadOutcome::removed);
  CHECK(result.verdict.gone);
  CHECK(store.holds.empty());
}

TEST_CASE("force_unlock_if_dead: a pid reused by another process is gone too") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  auto reused = [](long long) -> std::optional<ProcessStart> {
    ProcessStart start;
    start.start_ticks = 999;
    return start;
  };
  CHECK(if_dead(store, before, reused).outcome == lock::IfDeadOutcome::removed);
}

TEST_CASE("force_unlock_if_dead: judged gone, but it changed hands meanwhile: nothing removed") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  store.holds.clear();
  hold_as_process(store, "you"); // released and taken again between the read and the removal
  auto result = if_dead(store, before, no_process);
  CHECK(result.outcome == lock::IfDeadOutcome::changed_hands);
  CHECK(store.holds.at("job").owner == "you");
}

TEST_CASE("force_unlock_if_dead: judged gone, but released meanwhile") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  store.holds.clear();
  CHECK(if_dead(store, before, no_process).outcome == lock::IfDeadOutcome::released_meanwhile);
}

TEST_CASE("force_unlock_if_dead: the same owner with another record (re-taken) changed hands") {
  MemoryStore store;
  hold_as_process(store, "me");
  auto before = store.inspect({"job"}).front();
  store.holds.at("job").record_raw = "{\"pid\":43}";
  CHECK(if_dead(store, before, no_process).outcome == lock::IfDeadOutcome::changed_hands);
  CHECK(store.holds.count("job") == 1);
}

// ---- run --if-unavailable: skip, run or fail, from the error's kind ------------

TEST_CASE("on_acquire_error: only an unavailable Redis is skipped or run without the lock") {
  using run::IfUnavailable;
  using run::OnAcquireError;
  for (auto kind : {RedisErrorKind::connect, RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io,
                    RedisErrorKind::quorum}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(run::on_acquire_error(kind, IfUnavailable::skip) == OnAcquireError::skip);
    CHECK(run::on_acquire_error(kind, IfUnavailable::run) == OnAcquireError::run_unlocked);
    CHECK(run::on_acquire_error(kind, IfUnavailable::fail) == OnAcquireError::fail);
  }
  for (auto kind : {RedisErrorKind::auth, RedisErrorKind::protocol}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(run::on_acquire_error(kind, IfUnavailable::skip) == OnAcquireError::fail);
    CHECK(run::on_acquire_error(kind, IfUnavailable::run) == OnAcquireError::fail);
  }
}

namespace {

run::RunSpec run_spec(const std::vector<std::string>& names, const std::string& owner) {
  auto spec = once_per_spec(names, owner);
  spec.once_per.reset();
  return spec;
}

} // namespace

TEST_CASE("acquire_for_run: acquired, or busy whatever --if-unavailable says (busy is never unavailable)") {
  for (auto policy : {run::IfUnavailable::fail, run::IfUnavailable::skip, run::IfUnavailable::run}) {
    MemoryStore store;
    auto got = run::acquire_for_run(store, run_spec({"A", "B"}, "me"), policy, nullptr, {});
    CHECK(got.kind == run::RunAcquisition::Kind::acquired);
    CHECK(got.taken.results.size() == 2);
    auto busy = run::acquire_for_run(store, run_spec({"A"}, "you"), policy, nullptr, {});
    CHECK(busy.kind == run::RunAcquisition::Kind::busy);
    CHECK(busy.taken.results[busy.taken.busy].holder.owner == "me");
    CHECK_FALSE(busy.unavailable);
  }
}

TEST_CASE("acquire_for_run: Redis unreachable: skip, run unlocked, or its error") {
  MemoryStore store;
  store.failing["acquire"] = RedisErrorKind::connect;
  auto skipped = run::acquire_for_run(store, run_spec({"A"}, "me"), run::IfUnavailable::skip, nullptr, {});
  CHECK(skipped.kind == run::RunAcquisition::Kind::skip);
  REQUIRE(skipped.unavailable);
  CHECK(skipped.unavailable->kind() == RedisErrorKind::connect);
  auto unlocked = run::acquire_for_run(store, run_spec({"A"}, "me"), run::IfUnavailable::run, nullptr, {});
  CHECK(unlocked.kind == run::RunAcquisition::Kind::run_unlocked);
  CHECK_THROWS_AS(run::acquire_for_run(store, run_spec({"A"}, "me"), run::IfUnavailable::fail, nullptr, {}),
                  RedisError);
}

TEST_CASE("acquire_for_run: the second of two names unreachable: the first is given back, then skipped") {
  MemoryStore store;
  store.failing["acquire B"] = RedisErrorKind::timeout;
  auto skipped = run::acquire_for_run(store, run_spec({"A", "B"}, "me"), run::IfUnavailable::skip, nullptr, {});
  CHECK(skipped.kind == run::RunAcquisition::Kind::skip);
  CHECK(store.holds.empty());
}

TEST_CASE("acquire_for_run: a refused password is never unavailable") {
  MemoryStore store;
  store.failing["acquire"] = RedisErrorKind::auth;
  for (auto policy : {run::IfUnavailable::skip, run::IfUnavailable::run}) {
    CHECK_THROWS_AS(run::acquire_for_run(store, run_spec({"A"}, "me"), policy, nullptr, {}), RedisError);
  }
}

// ---- renew A B C: each independently ------------------------------------------

TEST_CASE("renew_all: one not ours and one failing do not stop the others") {
  MemoryStore store;
  hold(store, "A", "me");
  hold(store, "B", "you");
  hold(store, "D", "me");
  store.failing["renew D"] = RedisErrorKind::timeout;
  hold(store, "E", "me");
  std::vector<lock::LockKeys> locks;
  for (const char* name : {"A", "B", "C", "D", "E"}) {
    locks.push_back(lock::keys_for(name));
  }
  auto renewed = lock::renew_all(store, locks, lock::Mode::exclusive, "me", Millis(60'000),
                                 redis::RetryPolicy::Mode::one_shot, {});
  REQUIRE(renewed.results.size() == 5);
  CHECK_FALSE(renewed.errors[0]);
  CHECK(renewed.results[0].check == lock::OwnerCheck::ok);
  CHECK(renewed.results[0].lease == Millis(60'000));
  CHECK(renewed.results[1].check == lock::OwnerCheck::other);
  CHECK(renewed.results[1].detail == "you");
  CHECK(renewed.results[2].check == lock::OwnerCheck::missing);
  CHECK(renewed.errors[3]);
  CHECK_FALSE(renewed.errors[4]);
  CHECK(renewed.results[4].check == lock::OwnerCheck::ok);
  CHECK(store.holds.at("E").lease == Millis(60'000));
  CHECK(store.holds.at("B").lease == Millis(30'000)); // another owner's: untouched
  // In the order given.
  std::vector<std::string> renews;
  for (const auto& call : store.calls) {
    if (call.starts_with("renew")) {
      renews.push_back(call);
    }
  }
  CHECK(renews == std::vector<std::string>{"renew A", "renew B", "renew C", "renew D", "renew E"});
}
