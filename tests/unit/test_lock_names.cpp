#include <rlock/core/errors.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/lock/several.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using rlock::lock::hash_slot;
using rlock::lock::keys_for;

TEST_CASE("hash slots match Redis Cluster's (CLUSTER KEYSLOT values)") {
  CHECK(hash_slot("foo") == 12182);
  CHECK(hash_slot("bar") == 5061);
  CHECK(hash_slot("123456789") == 12739);
  CHECK(hash_slot("{user1000}.following") == hash_slot("user1000"));
  CHECK(hash_slot("foo{}{bar}") == 8363); // empty tag: the whole key is hashed
  CHECK(hash_slot("foo{}{bar}") != hash_slot("bar"));
  CHECK(hash_slot("foo{{bar}}zap") == hash_slot("{bar"));
}

TEST_CASE("companion keys follow Redisson's prefixName rule") {
  auto keys = keys_for("deploy");
  CHECK(keys.name == "deploy");
  CHECK(keys.fence_key == "redisson_lock_token:{deploy}");
  CHECK(keys.channel == "redisson_lock__channel:{deploy}");
  auto tagged = keys_for("job:{tenant1}:x");
  CHECK(tagged.fence_key == "redisson_lock_token:job:{tenant1}:x");
  CHECK(tagged.channel == "redisson_lock__channel:job:{tenant1}:x");
  CHECK(hash_slot(tagged.fence_key) == hash_slot(tagged.name));
}

TEST_CASE("names: odd bytes are fine, broken slots and sizes are usage errors") {
  CHECK_NOTHROW(keys_for("a\"b\nc"));
  CHECK_NOTHROW(keys_for("ключ"));
  CHECK_NOTHROW(keys_for("x[1]"));
  CHECK_NOTHROW(keys_for(std::string(1024, 'n')));
  CHECK_THROWS_AS(keys_for(""), rlock::UsageError);
  CHECK_THROWS_AS(keys_for(std::string(1025, 'n')), rlock::UsageError);
  CHECK_THROWS_AS(keys_for("a{b"), rlock::UsageError);  // no tag in NAME, tag in the companions
  CHECK_THROWS_AS(keys_for("a}b"), rlock::UsageError);  // "{a}b}" would hash "a"
  CHECK_THROWS_AS(keys_for("a{}b"), rlock::UsageError); // empty tag
}

TEST_CASE("latch keys share the lock's hash slot, Redisson's naming") {
  auto keys = keys_for("deploy");
  CHECK(keys.unlock_latch == "redisson_unlock_latch:{deploy}");
  CHECK(keys.acquire_latch == "rlock_acquire_latch:{deploy}");
  CHECK(rlock::lock::latch_key(keys.unlock_latch, "00ff") == "redisson_unlock_latch:{deploy}:00ff");
  for (const char* name : {"deploy", "job:{tenant1}:x", "ключ", "a\"b\nc"}) {
    auto k = keys_for(name);
    CHECK(hash_slot(rlock::lock::latch_key(k.unlock_latch, "0123456789abcdef")) == hash_slot(k.name));
    CHECK(hash_slot(rlock::lock::latch_key(k.acquire_latch, "fedcba9876543210")) == hash_slot(k.name));
  }
}

TEST_CASE("owner tokens: 1-256 printable bytes, never a field of the lock's own record") {
  using rlock::lock::check_owner_token;
  CHECK_NOTHROW(check_owner_token("8743c9c0-0795-4907-87fd-6c719a6b4586:1", "--owner"));
  CHECK_NOTHROW(check_owner_token("a b", "--owner"));
  CHECK_NOTHROW(check_owner_token(std::string(256, 't'), "--owner"));
  CHECK_NOTHROW(check_owner_token("meta", "--owner"));
  CHECK_NOTHROW(check_owner_token("xrlock:meta", "--owner"));
  CHECK_NOTHROW(check_owner_token("modes", "--owner"));
  for (std::string bad :
       {std::string(""), std::string(257, 't'), std::string("rlock:meta"), std::string("rlock:"),
        std::string("rlock:x"), std::string("mode"), std::string("a\nb"), std::string("tab\t"),
        std::string("\x7f"), std::string("caf\xc3\xa9")}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(check_owner_token(bad, "--owner"), rlock::UsageError);
  }
  try {
    check_owner_token("rlock:meta", "RLOCK_OWNER");
    FAIL("no error");
  } catch (const rlock::UsageError& e) {
    std::string what = e.what();
    CHECK(what.starts_with("RLOCK_OWNER: "));
    CHECK(what.find("reserved") != std::string::npos);
  }
  CHECK(rlock::lock::is_reserved_field("rlock:meta"));
  CHECK(rlock::lock::is_reserved_field("mode"));
  CHECK_FALSE(rlock::lock::is_reserved_field("uuid:1"));
}

TEST_CASE("the mode layouts' keys follow Redisson's prefixName and suffixName rules") {
  auto keys = keys_for("deploy");
  CHECK(keys.queue == "redisson_lock_queue:{deploy}");
  CHECK(keys.queue_timeouts == "redisson_lock_timeout:{deploy}");
  CHECK(keys.rw_channel == "redisson_rwlock:{deploy}");
  CHECK(keys.reader_prefix == "{deploy}");
  CHECK(keys.permit_timeouts == "{deploy}:timeout");
  CHECK(keys.permit_channel == "redisson_sc:{deploy}");
  auto tagged = keys_for("job:{t1}:x");
  CHECK(tagged.queue == "redisson_lock_queue:job:{t1}:x");
  CHECK(tagged.reader_prefix == "job:{t1}:x");
  CHECK(tagged.permit_timeouts == "job:{t1}:x:timeout");
  for (const auto* key : {&tagged.queue, &tagged.queue_timeouts, &tagged.waiters, &tagged.rw_channel,
                          &tagged.permit_timeouts, &tagged.permit_channel, &tagged.permit_records}) {
    CHECK(hash_slot(*key) == hash_slot(tagged.name));
  }
  // A fair waiter's channel and a reader's lease keys stay in the slot whatever the token.
  CHECK(hash_slot(keys.channel + ":tok}{x") == hash_slot("deploy"));
  CHECK(hash_slot(keys.reader_prefix + ":a{b}:rwlock_timeout:1") == hash_slot("deploy"));
}

TEST_CASE("several names are taken in one bytewise order, whatever order they are given in") {
  std::vector<rlock::lock::LockKeys> locks{keys_for("b"), keys_for("a"), keys_for("B"), keys_for("a2")};
  CHECK(rlock::lock::take_order(locks) == std::vector<std::size_t>{2, 1, 3, 0});
}

// Issue 19 #4: two accepted names never share a key, helper or lock. Redisson's
// rule gives "X" and "{X}" the same helper keys, so "{X}" is refused when "X" is
// accepted; a name with the form of a helper key is refused too.
TEST_CASE("names: no two accepted names share a key (the twin '{X}' and helper forms are refused)") {
  std::vector<std::string> pieces{"A", "{A}", "{A}}", "A}", "{a{b}}", "a{b}", "{A}:x", "x{A}", "{A}x", "{",
                                  "}", ":timeout", ":lock", "rlock_done:", "{}", "{{A}}", "B"};
  std::vector<std::string> names;
  for (const auto& a : pieces) {
    names.push_back(a);
    for (const auto& b : pieces) {
      names.push_back(a + b);
    }
  }
  names.insert(names.end(), {"rlock_done:{J}", "rlock_permits:{A}", "redisson_lock_queue:{A}", "{A}:timeout",
                             "a{b}:timeout", "{A}:o:rwlock_timeout:1", "rlock_done", "timeout", "{A}:timeouts"});
  std::map<std::string, std::string> owner_of; // key -> the accepted name it belongs to
  std::size_t accepted = 0;
  for (const auto& name : names) {
    rlock::lock::LockKeys k;
    try {
      k = keys_for(name);
    } catch (const rlock::UsageError&) {
      continue;
    }
    ++accepted;
    for (const auto& key : {k.name, k.fence_key, k.unlock_latch + ":0123", k.acquire_latch + ":0123", k.queue,
                            k.queue_timeouts, k.waiters, k.reader_prefix + ":o:rwlock_timeout:1", k.permit_timeouts,
                            k.permit_records, k.write_intent, k.done}) {
      auto [it, fresh] = owner_of.emplace(key, name);
      INFO("key " << key << " of " << name << " and " << it->second);
      CHECK((fresh || it->second == name));
    }
  }
  CHECK(accepted > 50);
  CHECK_THROWS_AS(keys_for("{A}"), rlock::UsageError);
  CHECK_THROWS_AS(keys_for("{job:1}"), rlock::UsageError);
  CHECK_NOTHROW(keys_for("{A}}"));  // "A}" itself is refused: no twin
  CHECK_NOTHROW(keys_for("{a{b}}")); // "a{b}" keeps its '{': keys "PREFIX:a{b}"
  CHECK_NOTHROW(keys_for("{A}:lock"));
  CHECK_THROWS_AS(keys_for("rlock_done:{J}"), rlock::UsageError);
  CHECK_THROWS_AS(keys_for("{A}:timeout"), rlock::UsageError);
  CHECK_NOTHROW(keys_for("A:timeout")); // no '{': nobody's permit set
  try {
    keys_for("{A}");
  } catch (const rlock::UsageError& e) {
    CHECK(std::string(e.what()).find(R"("{A}" and "A" the same helper keys)") != std::string::npos);
  }
}

TEST_CASE("several names: a lease that began before a wait for the others is renewed once the last is taken") {
  using rlock::Millis;
  const rlock::TimePoint t0{};
  // TTL 2s: within 200ms of the last one, a lease counts as starting with it.
  CHECK_FALSE(rlock::lock::lease_is_stale(t0, t0 + Millis(3), Millis(2'000))); // taken back to back
  CHECK_FALSE(rlock::lock::lease_is_stale(t0, t0 + Millis(200), Millis(2'000)));
  CHECK(rlock::lock::lease_is_stale(t0, t0 + Millis(201), Millis(2'000)));
  CHECK(rlock::lock::lease_is_stale(t0, t0 + Millis(34'000), Millis(30'000))); // waited 34s
  CHECK(rlock::lock::keep_alive_every(Millis(30'000)) == Millis(10'000));
  CHECK(rlock::lock::keep_alive_every(Millis(2'000)) == Millis(666));
  CHECK(rlock::lock::keep_alive_every(Millis(3)) == Millis(10));
}
