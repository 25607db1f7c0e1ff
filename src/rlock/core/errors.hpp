#pragma once

// What happened (Outcome), the exit codes it becomes (ExitCode), and the
// error types that carry an outcome up to the one catch in cli/commands.

#include <stdexcept>
#include <string>
#include <string_view>

namespace rlock {

// Exit statuses, as documented in the man page's EXIT STATUS and the CLI
// contract. Only cli/exit.cpp turns an Outcome into one of these (and run/
// turns CMD's end into its status: CMD's own, 128+N, lost).
enum class ExitCode : int {
  ok = 0,
  not_held = 1,        // see Outcome: not_held, nothing_removed, lock_free, unsafe_deployment
  usage = 64,          // bad flag, duration, URL or name (EX_USAGE)
  unavailable = 69,    // cannot connect, timed out (EX_UNAVAILABLE)
  software = 70,       // any other server or internal error (EX_SOFTWARE)
  busy = 75,           // lock busy or wait ran out, or --if-dead's live holder (EX_TEMPFAIL); -E changes it
  lost = 76,           // run: lock lost while CMD ran (EX_PROTOCOL)
  denied = 77,         // NOAUTH, WRONGPASS, NOPERM (EX_NOPERM)
  cannot_execute = 126,
  not_found = 127,
};

// What happened, named for what it is: code decides on these, and cli/exit.cpp
// alone maps each to an exit code (several share one: see ExitCode).
enum class Outcome {
  not_held,          // release, renew: not this owner's lock (or no lock)
  nothing_removed,   // force-unlock: the lock was free (or, --if-dead, released meanwhile)
  holder_alive,      // force-unlock --if-dead: held, its holder not provably gone (or it changed hands)
  lock_free,         // status NAME...: a named lock is free
  unsafe_deployment, // doctor: something on the server(s) makes locks unsafe
  usage,             // a bad flag, duration, URL or name
  bad_setting,       // a setting refused when used: a database that does not exist, an unusable TLS file
  unavailable,       // Redis cannot be reached or cannot answer now
  failed,            // any other server or internal error
  busy,              // the lock is busy or the wait ran out (-E remaps its code)
  lost,              // the lock was lost
  denied,            // NOAUTH, WRONGPASS, NOPERM
  cannot_execute,    // run: CMD cannot be executed
  not_found,         // run: CMD not found
  interrupted,       // a signal ended a wait (Interrupted: 128+N)
};

// Base of every error rlock reports. The top-level handler prints
// "rlock: <context>: <what()>" and exits with the code cli/ maps outcome() to.
class Error : public std::runtime_error {
public:
  Error(Outcome outcome, const std::string& message) : std::runtime_error(message), m_outcome(outcome) {}
  Outcome outcome() const { return m_outcome; }

private:
  Outcome m_outcome;
};

// A bad command line: flag, duration, URL or lock name (the parsers of each,
// in core/, redis/ and lock/, throw it while the command line is read).
class UsageError : public Error {
public:
  explicit UsageError(const std::string& message) : Error(Outcome::usage, message) {}
};

} // namespace rlock
