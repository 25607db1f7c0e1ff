#pragma once

#include <rlock/cli/options.hpp>
#include <rlock/redis/connection.hpp>

#include <string>

namespace rlock::cli {

// Runs a parsed invocation and returns the exit status. Throws rlock::Error; it
// first sets `context` to what it is doing (e.g. `acquire "NAME" on URL`) so the
// caller can print one line "rlock: <context>: <error>".
int execute(const Invocation& inv, std::string& context);

// The whole program: parse argv, execute, turn errors into one line on stderr
// and an exit status.
int main(int argc, char** argv);

} // namespace rlock::cli
