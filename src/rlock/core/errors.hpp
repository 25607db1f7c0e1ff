#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace rlock {

// Exit statuses, as documented in the man page's EXIT STATUS and the CLI contract.
enum class ExitCode : int {
  ok = 0,
  // not_held also: force-unlock --if-dead: the holder is not provably gone; doctor: something is unsafe
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

} // namespace rlock
