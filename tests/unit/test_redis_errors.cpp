#include <rlock/core/text.hpp>
#include <rlock/cli/exit.hpp>
#include <rlock/redis/errors.hpp>

#include <doctest/doctest.h>

using rlock::ExitCode;
using rlock::RedisErrorKind;

TEST_CASE("reply errors become typed errors with the contract's exit codes") {
  struct Case {
    const char* reply;
    RedisErrorKind kind;
    ExitCode code;
  };
  const Case cases[] = {
      {"NOSCRIPT No matching script. Please use EVAL.", RedisErrorKind::noscript, ExitCode::software},
      {"WRONGPASS invalid username-password pair or user is disabled.", RedisErrorKind::auth,
       ExitCode::denied},
      {"NOPERM this user has no permissions to run the 'evalsha' command", RedisErrorKind::auth,
       ExitCode::denied},
      {"ERR Error running script (call to f_x): @user_script:1: NOPERM ...", RedisErrorKind::auth,
       ExitCode::denied},
      // An ACL denial inside a script: Redis 7.0, then Redis 7.2+, 8.0 and Valkey 8.1.
      {"ERR The user executing the script can't publish to the channel mentioned in the command script: "
       "096d, on @user_script:453.",
       RedisErrorKind::auth, ExitCode::denied},
      {"ERR ACL failure in script: No permissions to access a channel script: 096d, on @user_script:453.",
       RedisErrorKind::auth, ExitCode::denied},
      {"ERR ACL failure in script: No permissions to access a key script: 096d, on @user_script:12.",
       RedisErrorKind::auth, ExitCode::denied},
      {"ERR invalid password", RedisErrorKind::auth, ExitCode::denied},
      {"MOVED 3999 127.0.0.1:6381", RedisErrorKind::moved, ExitCode::software},
      {"ASK 3999 127.0.0.1:6381", RedisErrorKind::ask, ExitCode::software},
      {"READONLY You can't write against a read only replica.", RedisErrorKind::readonly,
       ExitCode::unavailable},
      {"BUSY Redis is busy running a script.", RedisErrorKind::busy, ExitCode::unavailable},
      {"LOADING Redis is loading the dataset in memory", RedisErrorKind::loading, ExitCode::unavailable},
      {"OOM command not allowed when used memory > 'maxmemory'.", RedisErrorKind::oom, ExitCode::software},
      {"ERR unknown command 'EVALSHA'", RedisErrorKind::server, ExitCode::software},
      {"ASKING is not ASK", RedisErrorKind::server, ExitCode::software},
  };
  for (const auto& c : cases) {
    CAPTURE(c.reply);
    auto error = rlock::error_from_reply(c.reply);
    CHECK(error.kind() == c.kind);
    CHECK(rlock::cli::exit_code(error, 75) == static_cast<int>(c.code));
    CHECK(std::string(error.what()) == c.reply);
  }
}

// Issue 44: a script that finds one of the lock's keys of a type (or value)
// it cannot use answers DAMAGED, having changed nothing (lua/lib/damaged.lua).
TEST_CASE("a DAMAGED answer is its own kind, exits 70, and its line says which key and what to do") {
  auto error = rlock::error_from_reply(
      "DAMAGED the key redisson_lock_token:{a} is a hash, not a fencing counter: nothing changed "
      "(delete that key to use the lock again)");
  CHECK(error.kind() == RedisErrorKind::damaged);
  CHECK_FALSE(rlock::unavailable_kind(error.kind()));
  CHECK(rlock::cli::exit_code(error, 75) == static_cast<int>(ExitCode::software));
  CHECK(std::string(error.what()) ==
        "the key redisson_lock_token:{a} is a hash, not a fencing counter: nothing changed "
        "(delete that key to use the lock again)");
  // Only the word: a Lua error that happens to mention it is no such answer.
  CHECK(rlock::error_from_reply("ERR DAMAGED goods").kind() == RedisErrorKind::server);
  CHECK(rlock::error_from_reply("DAMAGEDX y").kind() == RedisErrorKind::server);
}

TEST_CASE("a missing password says so and how to give one, whatever Redis's wording") {
  for (const char* reply : {"NOAUTH Authentication required.",
                            // Redis 7, to a command of more than 10 arguments before AUTH
                            "ERR Protocol error: unauthenticated multibulk length",
                            "ERR Protocol error: unauthenticated bulk length"}) {
    CAPTURE(reply);
    auto error = rlock::error_from_reply(reply);
    CHECK(error.kind() == RedisErrorKind::auth);
    CHECK(rlock::cli::exit_code(error, 75) == static_cast<int>(ExitCode::denied));
    std::string message = error.what();
    CHECK(message.starts_with("NOAUTH"));
    CHECK(message.find("requires a password") != std::string::npos);
    CHECK(message.find("--password-file") != std::string::npos);
    CHECK(message.find("RLOCK_PASSWORD") != std::string::npos);
    CHECK(message.find("URL") != std::string::npos);
    CHECK(message.find("multibulk") == std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  // A wrong password is not a missing one.
  CHECK(std::string(rlock::error_from_reply("WRONGPASS invalid username-password pair").what())
            .find("--password-file") == std::string::npos);
}

TEST_CASE("socket failures map to 69") {
  for (auto kind :
       {RedisErrorKind::connect, RedisErrorKind::timeout, RedisErrorKind::closed, RedisErrorKind::io}) {
    CHECK(rlock::cli::exit_code(rlock::outcome_for(kind), 75) == static_cast<int>(ExitCode::unavailable));
  }
  CHECK(rlock::cli::exit_code(rlock::outcome_for(RedisErrorKind::protocol), 75) == static_cast<int>(ExitCode::software));
}

TEST_CASE("printable keeps messages on one line") {
  CHECK(rlock::printable("a\nb\tc\"d\\") == "a\\nb\\tc\\\"d\\\\");
  CHECK(rlock::printable("ключ") == "ключ");
  CHECK(rlock::printable(std::string("\xff\x01", 2)) == "\\xff\\x01");
  CHECK(rlock::quote("x") == "\"x\"");
}

// Issue 19: a record's U+009B (C1 CSI) and U+202E (right-to-left override)
// printed raw; they are escaped, as are the other C1 and bidi controls.
TEST_CASE("printable escapes C1 controls, bidirectional controls and line separators") {
  CHECK(rlock::printable("a\u009b31mb") == "a\\u009b31mb");
  CHECK(rlock::printable("evil\u202etxt.sh") == "evil\\u202etxt.sh");
  CHECK(rlock::printable("\u2066x\u2069\u200f\u2028") == "\\u2066x\\u2069\\u200f\\u2028");
  CHECK(rlock::printable("名前 🔒") == "名前 🔒");
  // Overlong forms and surrogates are not valid UTF-8: their bytes are escaped.
  CHECK(rlock::printable(std::string("\xc0\xaf", 2)) == "\\xc0\\xaf");
  CHECK(rlock::printable(std::string("\xed\xa0\x80", 3)) == "\\xed\\xa0\\x80");
}

TEST_CASE("owner tokens look like Redisson's uuid:thread fields and differ") {
  auto a = rlock::random_owner_token(4242);
  auto b = rlock::random_owner_token(4242);
  CHECK(a != b);
  CHECK(a.size() > 37);
  CHECK(a[36] == ':');
  CHECK(a[14] == '4');
  CHECK(a.ends_with(":4242")); // the holder's pid, the one its record names
}

TEST_CASE("denies_a_key: a key the user may not use, not a command it may not run (issue 30)") {
  using rlock::error_from_reply;
  CHECK(rlock::denies_a_key(
      error_from_reply("NOPERM this user has no permissions to access one of the keys used as arguments")));
  CHECK(rlock::denies_a_key(error_from_reply("NOPERM No permissions to access a key")));
  CHECK(rlock::denies_a_key(error_from_reply(
      "ERR The user executing the script can't access at least one of the keys mentioned in the command "
      "arguments script: b466, on @user_script:1.")));
  CHECK_FALSE(rlock::denies_a_key(error_from_reply("NOPERM this user has no permissions to run the 'xadd' command")));
  CHECK_FALSE(rlock::denies_a_key(error_from_reply("ERR access one of the keys"))); // not a denial
}
