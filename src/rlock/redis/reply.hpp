#pragma once

#include <string>
#include <vector>

struct redisReply;

namespace rlock::redis {

// An owned copy of one RESP reply. Error replies are turned into exceptions by
// Connection before they reach callers, so `error` only appears inside arrays.
struct Reply {
  enum class Type { nil, integer, string, status, error, array };
  Type type = Type::nil;
  long long integer = 0;
  std::string str;             // string, status, error
  std::vector<Reply> elements; // array

  static Reply from_hiredis(const redisReply& reply);

  bool is_nil() const { return type == Type::nil; }
  bool is_array() const { return type == Type::array; }
  // The integer, or the string parsed as an integer (Lua numbers arrive as
  // integers; hash values as strings). Throws RedisError(protocol) otherwise.
  long long as_integer() const;
  // The string or status text; throws RedisError(protocol) otherwise.
  const std::string& as_string() const;
  // A short one-line rendering for -v logs.
  std::string summary() const;
};

} // namespace rlock::redis
