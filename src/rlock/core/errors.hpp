#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace rlock {

// Exit statuses, as documented in the man page's EXIT STATUS and the CLI contract.
enum class ExitCode : int {
  ok = 0,
  not_held = 1,        // release/renew: not our lock; force-unlock: nothing; status: a lock is free
  usage = 64,          // bad flag, duration, URL or name (EX_USAGE)
  unavailable = 69,    // cannot connect, timed out (EX_UNAVAILABLE)
  software = 70,       // any other server or internal error (EX_SOFTWARE)
  busy = 75,           // lock busy or wait ran out (EX_TEMPFAIL); -E changes it
  lost = 76,           // run: lock lost while CMD ran (EX_PROTOCOL)
  denied = 77,         // NOAUTH, WRONGPASS, NOPERM (EX_NOPERM)
  cannot_execute = 126,
  not_found = 127,
};

// Base of every error rlock reports. The top-level handler prints
// "rlock: <context>: <what()>" and exits with exit_code().
class Error : public std::runtime_error {
public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), m_code(code) {}
  ExitCode exit_code() const { return m_code; }

private:
  ExitCode m_code;
};

// A bad command line: flag, duration, URL or lock name.
class UsageError : public Error {
public:
  explicit UsageError(const std::string& message) : Error(ExitCode::usage, message) {}
};

// What went wrong talking to Redis. Kind decides the exit code and whether a
// request may be retried on a fresh connection.
enum class RedisErrorKind {
  connect,   // could not connect (refused, unreachable, DNS, connect timeout)
  timeout,   // a request got no (whole) reply in time: it may still be applied
  closed,    // connection closed or reset mid-request
  io,        // other socket error
  protocol,  // unparsable reply
  auth,      // NOAUTH, WRONGPASS, NOPERM, ACL denial inside a script
  noscript,  // NOSCRIPT: script cache flushed
  moved,     // MOVED slot host:port (Cluster)
  ask,       // ASK slot host:port (Cluster)
  readonly,  // READONLY: talking to a replica
  busy,      // BUSY: a script is running too long
  loading,   // LOADING: server loading its data set
  oom,       // OOM: maxmemory reached
  server,    // any other error reply
};

class RedisError : public Error {
public:
  RedisError(RedisErrorKind kind, const std::string& message);
  RedisErrorKind kind() const { return m_kind; }
  // True when the server may not have seen the request (or it is safe to resend),
  // e.g. connect failed, LOADING, BUSY.
  bool transient() const;

private:
  RedisErrorKind m_kind;
};

// Turns an error reply's text ("WRONGPASS invalid ...") into a typed error. The
// single place where reply error prefixes are interpreted.
RedisError error_from_reply(std::string_view reply_text);

// Exit code for a RedisErrorKind.
ExitCode exit_code_for(RedisErrorKind kind);

} // namespace rlock
