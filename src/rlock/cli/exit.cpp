// Outcome -> exit code, the one map (the man page's EXIT STATUS).

#include <rlock/cli/exit.hpp>
#include <rlock/core/signals.hpp>

namespace rlock::cli {

int exit_code(Outcome outcome, int conflict_exit_code) {
  auto code = [](ExitCode exit) { return static_cast<int>(exit); };
  switch (outcome) {
  case Outcome::not_held:
  case Outcome::nothing_removed:
  case Outcome::lock_free:
  case Outcome::unsafe_deployment:
    return code(ExitCode::not_held);
  case Outcome::usage:
  case Outcome::bad_setting:
    return code(ExitCode::usage);
  case Outcome::unavailable:
    return code(ExitCode::unavailable);
  case Outcome::failed:
    return code(ExitCode::software);
  case Outcome::busy:
  case Outcome::holder_alive: // force-unlock --if-dead: the lock is held, and stays so
    return conflict_exit_code;
  case Outcome::lost:
    return code(ExitCode::lost);
  case Outcome::denied:
    return code(ExitCode::denied);
  case Outcome::cannot_execute:
    return code(ExitCode::cannot_execute);
  case Outcome::not_found:
    return code(ExitCode::not_found);
  case Outcome::interrupted:
    return 128 + SIGINT; // an Interrupted says which signal: the overload below
  }
  return code(ExitCode::software);
}

int exit_code(const Error& error, int conflict_exit_code) {
  if (const auto* interrupted = dynamic_cast<const Interrupted*>(&error)) {
    return 128 + interrupted->signal();
  }
  return exit_code(error.outcome(), conflict_exit_code);
}

} // namespace rlock::cli
