#pragma once

// RedisError and its kinds: what went wrong talking to Redis, typed once.

#include <rlock/core/clock.hpp>
#include <rlock/core/errors.hpp>

#include <optional>

#include <string>
#include <string_view>

namespace rlock {

// What went wrong talking to Redis. Kind decides the outcome (outcome_for) and, through
// redis::RetryPolicy, whether a request is sent again.
enum class RedisErrorKind {
  connect,  // could not connect (refused, unreachable, DNS, connect timeout)
  timeout,  // a request got no (whole) reply in time: it may still be applied
  closed,   // connection closed or reset mid-request
  io,       // other socket error
  protocol, // unparsable reply
  auth,     // NOAUTH, WRONGPASS, NOPERM, ACL denial inside a script
  noscript, // NOSCRIPT: script cache flushed
  moved,    // MOVED slot host:port (Cluster)
  ask,      // ASK slot host:port (Cluster)
  readonly, // READONLY: talking to a replica
  tryagain, // TRYAGAIN, CLUSTERDOWN, MASTERDOWN: a cluster or replica in transition
  unsynced, // --sync-replicas: fewer replicas acknowledged than asked (not a reply)
  quorum,   // Redlock: too few masters answered in time (not a reply)
  busy,     // BUSY: a script is running too long
  loading,  // LOADING: server loading its data set
  oom,      // OOM: maxmemory reached
  late,     // LATE: the script ran after the deadline it carried and changed nothing (issue 34)
  server,   // any other error reply
  damaged,  // DAMAGED: a lock's key holds a type or value the script cannot use; nothing changed (lua/lib/damaged.lua)
};

class RedisError : public Error {
public:
  RedisError(RedisErrorKind kind, const std::string& message);
  // What a failed request tells about being applied, and whether to resend it:
  // decided in one place, redis/retry.hpp (outcome_of, RetryPolicy).
  RedisErrorKind kind() const { return m_kind; }
  // A request that got no answer (timeout, io) and carried a deadline: the
  // local time after which the server surely refuses it (server_clock.hpp).
  // send_with_retries waits for it before it gives up on the request.
  std::optional<TimePoint> settles_at() const { return m_settles_at; }
  void set_settles_at(TimePoint at) { m_settles_at = at; }
  // A script request that got no answer: when its bytes went out (after the
  // connect; eval_batch). It may have been applied then or later, never before:
  // where a lease starts when a resend finds it applied (lock::lease_start).
  std::optional<TimePoint> sent_at() const { return m_sent_at; }
  void set_sent_at(TimePoint at) { m_sent_at = at; }

private:
  RedisErrorKind m_kind;
  std::optional<TimePoint> m_settles_at;
  std::optional<TimePoint> m_sent_at;
};

// Turns an error reply's text ("WRONGPASS invalid ...") into a typed error whose
// message is the reply's text, except for a missing password (NOAUTH, or Redis 7's
// "Protocol error: unauthenticated ..."): auth, with a message saying how to give
// one. The single place where reply error prefixes are interpreted.
RedisError error_from_reply(std::string_view reply_text);

// Whether an error is Redis refusing a request because the user may not use
// one of the keys it names (an ACL key pattern, checked before a script runs:
// "NOPERM this user has no permissions to access one of the keys used as
// arguments", Redis 7.2's "NOPERM No permissions to access a key", or the same
// raised inside a script), as opposed to a command the user may not run.
bool denies_a_key(const RedisError& error);

// Whether a kind means Redis cannot be reached or cannot answer now (no
// connection, a timeout, loading, read-only, no quorum...): Outcome::unavailable.
bool unavailable_kind(RedisErrorKind kind);

// What a RedisErrorKind means for the command: unavailable (exit 69), denied
// (77) or failed (70); cli/exit.cpp maps it to the code.
Outcome outcome_for(RedisErrorKind kind);

} // namespace rlock
