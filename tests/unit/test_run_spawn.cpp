#include <rlock/run/spawn.hpp>

#include <doctest/doctest.h>

#include <string>

using rlock::run::decode_release_spec;
using rlock::run::encode_release_spec;

TEST_CASE("release spec: what the guardian keeps for rlock after its death reads back exactly") {
  const std::vector<std::string> args{"rlock", "-u", "redis://:pw@127.0.0.1:6379", "run", "A", "--", "sh", "-c", ""};
  const std::vector<std::string> env{"PATH=/bin", "RLOCK_PASSWORD=s=e=c", "EMPTY="};
  auto bytes = encode_release_spec("owner-1", args, env);
  auto spec = decode_release_spec(bytes);
  REQUIRE(spec);
  CHECK(spec->owner == "owner-1");
  CHECK(spec->args == args);
  CHECK(spec->env == env);

  auto none = decode_release_spec(encode_release_spec("o", {"rlock", "run", "A", "--", "true"}, {}));
  REQUIRE(none);
  CHECK(none->env.empty());
}

TEST_CASE("release spec: anything else is refused, not half-read") {
  auto bytes = encode_release_spec("owner-1", {"rlock", "run", "A", "--", "true"}, {"X=1"});
  CHECK_FALSE(decode_release_spec(""));
  CHECK_FALSE(decode_release_spec(bytes.substr(0, bytes.size() - 1))); // cut short
  CHECK_FALSE(decode_release_spec(bytes + "extra"));                     // trailing bytes
  std::string other = bytes;
  other[0] = 'X';
  CHECK_FALSE(decode_release_spec(other)); // another format
  CHECK_FALSE(decode_release_spec(encode_release_spec("", {"rlock"}, {})));   // no owner
  CHECK_FALSE(decode_release_spec(encode_release_spec("o", {}, {"X=1"})));    // no command line
  std::string huge = std::string("rlock-release-1") + '\0' + "o" + '\0' + "99999999" + '\0';
  CHECK_FALSE(decode_release_spec(huge)); // a count it cannot hold
  std::string negative = std::string("rlock-release-1") + '\0' + "o" + '\0' + "-1" + '\0';
  CHECK_FALSE(decode_release_spec(negative));
}

// Issue 44 (fuzz_release_spec): counts with leading zeros ("02") were read,
// though encode_release_spec never writes them: not exactly its bytes.
TEST_CASE("release spec: a count is read only as encode_release_spec writes it") {
  const std::string head = std::string("rlock-release-1") + '\0' + "o" + '\0';
  CHECK(decode_release_spec(head + "1" + '\0' + "rlock" + '\0' + "0" + '\0'));
  CHECK_FALSE(decode_release_spec(head + "01" + '\0' + "rlock" + '\0' + "0" + '\0'));
  CHECK_FALSE(decode_release_spec(head + "1" + '\0' + "rlock" + '\0' + "00" + '\0'));
  const std::string found("rlock-release-1\0ownesCx\00002\0run\006\0-\0000\0", 36);
  CHECK_FALSE(decode_release_spec(found));
}
