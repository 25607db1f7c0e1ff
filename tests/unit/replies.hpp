#pragma once

// Reply values made by hand, for the unit tests of decoders (what a server
// would answer, or a hostile one).

#include <rlock/redis/reply.hpp>

#include <string>
#include <utility>
#include <vector>

namespace rlock::test {

inline redis::Reply str(std::string text) {
  redis::Reply reply;
  reply.type = redis::Reply::Type::string;
  reply.str = std::move(text);
  return reply;
}

inline redis::Reply array(std::vector<redis::Reply> elements) {
  redis::Reply reply;
  reply.type = redis::Reply::Type::array;
  reply.elements = std::move(elements);
  return reply;
}

inline redis::Reply integer(long long value) {
  redis::Reply reply;
  reply.type = redis::Reply::Type::integer;
  reply.integer = value;
  return reply;
}

} // namespace rlock::test
