#include <rlock/redis/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/hiredis.hpp>
#include <rlock/redis/reply.hpp>

#include <fmt/format.h>

#include <charconv>

namespace rlock::redis {

Reply Reply::from_hiredis(const redisReply& reply) {
  Reply out;
  switch (reply.type) {
  case REDIS_REPLY_STRING:
    out.type = Type::string;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_STATUS:
    out.type = Type::status;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_ERROR:
    out.type = Type::error;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_INTEGER:
    out.type = Type::integer;
    out.integer = reply.integer;
    break;
  case REDIS_REPLY_ARRAY:
    out.type = Type::array;
    out.elements.reserve(reply.elements);
    for (std::size_t i = 0; i < reply.elements; ++i) {
      out.elements.push_back(from_hiredis(*reply.element[i]));
    }
    break;
  default:
    out.type = Type::nil;
    break;
  }
  return out;
}

long long Reply::as_integer() const {
  if (type == Type::integer) {
    return integer;
  }
  if (type == Type::string || type == Type::status) {
    long long value = 0;
    auto [ptr, ec] = std::from_chars(str.data(), str.data() + str.size(), value);
    if (ec == std::errc() && ptr == str.data() + str.size()) {
      return value;
    }
  }
  throw RedisError(RedisErrorKind::protocol, fmt::format("expected an integer, got {}", summary()));
}

const std::string& Reply::as_string() const {
  if (type == Type::string || type == Type::status) {
    return str;
  }
  throw RedisError(RedisErrorKind::protocol, fmt::format("expected a string, got {}", summary()));
}

std::string Reply::summary() const {
  switch (type) {
  case Type::nil:
    return "(nil)";
  case Type::integer:
    return fmt::format("{}", integer);
  case Type::string:
    return str.size() > 80 ? quote(str.substr(0, 80)) + "..." : quote(str);
  case Type::status:
    return printable(str);
  case Type::error:
    return "(error) " + printable(str);
  case Type::array: {
    std::string out = "[";
    for (std::size_t i = 0; i < elements.size(); ++i) {
      out += (i ? ", " : "") + elements[i].summary();
    }
    return out + "]";
  }
  }
  return "?";
}

} // namespace rlock::redis
