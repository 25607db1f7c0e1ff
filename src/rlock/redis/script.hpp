#pragma once

#include <rlock/redis/connection.hpp>

#include <string_view>
#include <vector>

namespace rlock::redis {

// A Lua script compiled into the binary (see cmake/embed_lua.cmake): its exact
// text and the SHA1 Redis will know it by.
struct Script {
  std::string_view name;
  std::string_view text;
  std::string_view sha;
};

// Runs `script` with EVALSHA: one round trip when the server has it cached. On
// NOSCRIPT (after a restart or SCRIPT FLUSH) it loads the script with SCRIPT LOAD
// and retries once. Names and values travel only as KEYS and ARGV. Throws
// RedisError like Connection::command.
Reply eval(Connection& conn, const Script& script, const std::vector<std::string>& keys,
           const std::vector<std::string>& args);

} // namespace rlock::redis

namespace rlock::scripts {
// Defined in the generated scripts.cpp, one per lua/*.lua file.
extern const redis::Script acquire;
extern const redis::Script release;
extern const redis::Script renew;
extern const redis::Script force_unlock;
extern const redis::Script inspect;
} // namespace rlock::scripts
