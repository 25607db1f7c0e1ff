#include <rlock/redis/errors.hpp>

#include <fmt/format.h>

namespace rlock {

RedisError::RedisError(RedisErrorKind kind, const std::string& message)
    : Error(exit_code_for(kind), message), m_kind(kind) {}

ExitCode exit_code_for(RedisErrorKind kind) {
  switch (kind) {
  case RedisErrorKind::connect:
  case RedisErrorKind::timeout:
  case RedisErrorKind::closed:
  case RedisErrorKind::io:
  case RedisErrorKind::loading:
  case RedisErrorKind::busy:
  case RedisErrorKind::readonly:
    return ExitCode::unavailable;
  case RedisErrorKind::auth:
    return ExitCode::denied;
  default:
    return ExitCode::software;
  }
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
  };
  for (const auto& prefix : k_prefixes) {
    if (starts_with_word(text, prefix.word)) {
      return prefix.kind;
    }
  }
  // Errors raised by redis.call inside a script carry the original error after a
  // prefix ("ERR Error running script ...: NOPERM ..."); Redis 6 words an ACL
  // denial inside a script differently.
  if (text.find("NOPERM") != std::string_view::npos ||
      text.find("The user executing the script can't") != std::string_view::npos ||
      text.find("no permissions to") != std::string_view::npos) {
    return RedisErrorKind::auth;
  }
  // Redis 7 refuses a long command from a client that has not authenticated
  // before answering NOAUTH.
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

} // namespace

RedisError error_from_reply(std::string_view reply_text) {
  return RedisError(classify(reply_text), std::string(reply_text));
}

} // namespace rlock
