#pragma once

// A Lua script compiled into the binary, and how it is sent (EVALSHA).

#include <rlock/redis/connection.hpp>

#include <string_view>
#include <vector>

namespace rlock::redis {

// A Lua script compiled into the binary (see cmake/embed_lua.cmake): its exact
// text and the SHA1 Redis will know it by; `deadline_arg`: N when the script
// says "-- @deadline ARGV[N]" (every script that changes something), else 0.
struct Script {
  std::string_view name;
  std::string_view text;
  std::string_view sha;
  int deadline_arg = 0;
};

// What a caller puts at a script's deadline argument (ARGV[deadline_arg]);
// eval_batch replaces it, for each send, with the deadline on the clock of
// the server it goes to (server_clock.hpp, lua/lib/deadline.lua). A script
// with a deadline argument sent without this there is an internal error.
inline constexpr std::string_view k_deadline_slot = "rlock:deadline";

// EVALSHA of `script` with its KEYS and ARGV: names and values travel only there.
Argv evalsha_argv(const Script& script, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args);

// Sends `before`, `evalsha` and `after` in one round trip (ASKING before it on a
// Cluster, WAIT after it for --sync-replicas; `extra` lengthens the deadline
// for the WAIT) and returns the replies of `evalsha` and `after`. On NOSCRIPT
// (after a restart or SCRIPT FLUSH) it loads the script with SCRIPT LOAD and
// sends the batch once more. Throws RedisError like Connection::pipeline.
//
// A script with a deadline argument gets, at each send, the latest server
// time at which the server may still run it: the server's clock (as far as
// it is known) when its reply stops being awaited (server_clock.hpp). TIME
// rides along when the clock is not known or is old. A LATE answer (that
// estimate was wrong: the server's clock was stepped, or this host's wall
// clock is behind it before the first sample) changed nothing: the batch is
// sent once more at once with the clock it told. An unanswered send (timeout,
// io) throws with RedisError::settles_at set, and, as every error of a send
// whose outcome is unknown, RedisError::sent_at. `sent`: set to when the
// answered send went out (after connecting; the send a LATE answer repeated).
std::vector<Reply> eval_batch(Connection& conn, const Script& script, const Argv& evalsha,
                              const std::vector<Argv>& before, const std::vector<Argv>& after, Millis extra,
                              TimePoint* sent = nullptr);

} // namespace rlock::redis

namespace rlock::scripts {
// Defined in the generated scripts.cpp, one per lua/*.lua file.
extern const redis::Script acquire;
extern const redis::Script release;
extern const redis::Script renew;
extern const redis::Script force_unlock;
extern const redis::Script inspect;
extern const redis::Script fence_raise;
extern const redis::Script permit_acquire;
extern const redis::Script permit_release;
extern const redis::Script permit_renew;
extern const redis::Script rw_acquire;
extern const redis::Script rw_release;
extern const redis::Script rw_renew;
extern const redis::Script rw_leave;
extern const redis::Script fair_acquire;
extern const redis::Script fair_leave;
extern const redis::Script turn_leave;
extern const redis::Script once_done;
extern const redis::Script log_event;
extern const redis::Script history_read;
} // namespace rlock::scripts
