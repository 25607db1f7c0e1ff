#pragma once

// The one place where what happened becomes an exit code.

#include <rlock/core/errors.hpp>

namespace rlock::cli {

// The one place where what happened becomes an exit code (the man page's EXIT
// STATUS). `conflict_exit_code`: -E's value, the code of Outcome::busy.
int exit_code(Outcome outcome, int conflict_exit_code);

// The exit code of an error: its outcome's, 128+N for an Interrupted.
int exit_code(const Error& error, int conflict_exit_code);

} // namespace rlock::cli
