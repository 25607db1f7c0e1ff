#pragma once

// What the libFuzzer targets of fuzz/ share (one target per decoder of what
// rlock reads; CMakeLists.txt builds them with RLOCK_SANITIZE=fuzz, `./dev fuzz`
// runs them). A target catches only the failures its decoder documents (a
// RedisError for a reply, a UsageError for argv); anything else escaping, a
// sanitizer report or a broken promise (FUZZ_CHECK) is a finding.

#include <rlock/core/errors.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/reply.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

// A promise of the decoder under test, checked on what it returned.
#define FUZZ_CHECK(cond)                                                                                     \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
      std::abort();                                                                                          \
    }                                                                                                        \
  } while (0)

namespace rlock::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The replies `wire` holds (at most `max`), read as a connection reads them:
// rlock's ReplyReader (hiredis's reader with rlock's caps). Bytes that are not
// RESP end the list (the RedisError a connection would throw).
inline std::vector<redis::Reply> replies_of(std::string_view wire, std::size_t max = 8) {
  std::vector<redis::Reply> out;
  try {
    redis::ReplyReader reader;
    reader.feed(wire.data(), wire.size());
    redis::Reply reply;
    while (out.size() < max && reader.next(reply)) {
      out.push_back(std::move(reply));
    }
  } catch (const RedisError&) {
  }
  return out;
}

// The first reply of `wire`, or a nil reply.
inline redis::Reply reply_of(std::string_view wire) {
  auto replies = replies_of(wire, 1);
  return replies.empty() ? redis::Reply{} : std::move(replies.front());
}

// Every string a reply holds stays valid: each accessor of every value, all
// the way down (the accessors throw RedisError for the wrong type, by contract).
inline void walk(const redis::Reply& reply, int depth = 0) {
  (void)reply.summary();
  try {
    (void)reply.as_integer();
  } catch (const RedisError&) {
  }
  try {
    (void)reply.as_string();
  } catch (const RedisError&) {
  }
  if (depth < 16) {
    for (const auto& element : reply.elements) {
      walk(element, depth + 1);
    }
  }
}

} // namespace rlock::fuzz
