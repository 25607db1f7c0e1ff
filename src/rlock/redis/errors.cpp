// Redis error replies and socket failures -> typed kinds: the one map.

#include <rlock/redis/errors.hpp>

#include <fmt/format.h>

namespace rlock {

RedisError::RedisError(RedisErrorKind kind, const std::string& message)
    : Error(outcome_for(kind), message), m_kind(kind) {}

bool unavailable_kind(RedisErrorKind kind) {
  switch (kind) {
  case RedisErrorKind::connect:
  case RedisErrorKind::timeout:
  case RedisErrorKind::closed:
  case RedisErrorKind::io:
  case RedisErrorKind::loading:
  case RedisErrorKind::busy:
  case RedisErrorKind::readonly:
  case RedisErrorKind::tryagain:
  case RedisErrorKind::unsynced:
  case RedisErrorKind::quorum:
  case RedisErrorKind::late:
    return true;
  case RedisErrorKind::protocol:
  case RedisErrorKind::auth:
  case RedisErrorKind::noscript:
  case RedisErrorKind::moved:
  case RedisErrorKind::ask:
  case RedisErrorKind::oom:
  case RedisErrorKind::damaged:
  case RedisErrorKind::server:
    return false;
  }
  return false;
}

Outcome outcome_for(RedisErrorKind kind) {
  if (unavailable_kind(kind)) {
    return Outcome::unavailable;
  }
  return kind == RedisErrorKind::auth ? Outcome::denied : Outcome::failed;
}

namespace {

bool starts_with_word(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

RedisErrorKind classify(std::string_view text) {
  struct Prefix {
    std::string_view word;
    RedisErrorKind kind;
  };
  static constexpr Prefix k_prefixes[] = {
      {"NOSCRIPT", RedisErrorKind::noscript}, {"NOAUTH", RedisErrorKind::auth},
      {"WRONGPASS", RedisErrorKind::auth},    {"NOPERM", RedisErrorKind::auth},
      {"MOVED", RedisErrorKind::moved},       {"ASK", RedisErrorKind::ask},
      {"READONLY", RedisErrorKind::readonly}, {"BUSY", RedisErrorKind::busy},
      {"LOADING", RedisErrorKind::loading},   {"OOM", RedisErrorKind::oom},
      {"TRYAGAIN", RedisErrorKind::tryagain}, {"CLUSTERDOWN", RedisErrorKind::tryagain},
      {"MASTERDOWN", RedisErrorKind::tryagain}, {"LATE", RedisErrorKind::late},
      {"DAMAGED", RedisErrorKind::damaged},
  };
  for (const auto& prefix : k_prefixes) {
    if (starts_with_word(text, prefix.word)) {
      return prefix.kind;
    }
  }
  // Errors raised by redis.call inside a script carry the original error after a
  // prefix ("ERR Error running script ...: NOPERM ..."); Redis 6 and 7.0 word
  // an ACL denial inside a script differently, and Redis 7.2+, 8 and Valkey 8
  // differently again ("ERR ACL failure in script: No permissions to access a
  // channel ...", test_servers_redis8/valkey8).
  if (text.find("NOPERM") != std::string_view::npos ||
      text.find("The user executing the script can't") != std::string_view::npos ||
      text.find("no permissions to") != std::string_view::npos ||
      text.find("ACL failure in script") != std::string_view::npos) {
    return RedisErrorKind::auth;
  }
  // Redis 7 refuses a long command from a client that has not authenticated
  // before answering NOAUTH (see message_for).
  if (text.find("unauthenticated") != std::string_view::npos) {
    return RedisErrorKind::auth;
  }
  if (text.find("OOM ") != std::string_view::npos) {
    return RedisErrorKind::oom;
  }
  // Redis 6 and older answer AUTH with a wrong password this way.
  if (text.starts_with("ERR invalid password") || text.starts_with("ERR AUTH")) {
    return RedisErrorKind::auth;
  }
  return RedisErrorKind::server;
}

// The error's message: the reply's text, except where it does not say what to do.
std::string message_for(std::string_view text) {
  // Both mean that no password was given (with one, AUTH would have failed
  // first, with WRONGPASS). Redis 7 answers a command of more than 10 arguments
  // (EVALSHA) from an unauthenticated client with "ERR Protocol error:
  // unauthenticated multibulk length" (or "bulk length") and closes the
  // connection, instead of NOAUTH.
  if (starts_with_word(text, "NOAUTH") ||
      text.find("Protocol error: unauthenticated") != std::string_view::npos) {
    return "NOAUTH: the server requires a password; give one with --password-file, RLOCK_PASSWORD "
           "or the URL (redis://:PASSWORD@HOST)";
  }
  // A script's DAMAGED answer says itself what is wrong and what to do
  // ("the key K is a hash, not ...: nothing changed (...)"): the word is the kind's.
  if (starts_with_word(text, "DAMAGED") && text.size() > 8) {
    return std::string(text.substr(8));
  }
  return std::string(text);
}

} // namespace

bool denies_a_key(const RedisError& error) {
  if (error.kind() != RedisErrorKind::auth) {
    return false;
  }
  std::string_view text = error.what();
  return text.find("access one of the keys") != std::string_view::npos ||
         text.find("access a key") != std::string_view::npos ||
         text.find("access at least one of the keys") != std::string_view::npos;
}

RedisError error_from_reply(std::string_view reply_text) {
  return RedisError(classify(reply_text), message_for(reply_text));
}

} // namespace rlock
