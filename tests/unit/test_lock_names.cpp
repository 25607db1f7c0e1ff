#include <rlock/core/errors.hpp>
#include <rlock/lock/names.hpp>

#include <doctest/doctest.h>

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
