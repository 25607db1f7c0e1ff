#pragma once

// The program: cli::main (parse, then the subcommand's handler; one line and
// an exit status for every error) and execute (an invocation's handler).

#include <rlock/cli/options.hpp>
#include <rlock/redis/connection.hpp>

#include <string>
#include <vector>

namespace rlock::cli {

// Runs a parsed invocation and returns the exit status. Throws rlock::Error; it
// first sets `context` to what it is doing (e.g. `acquire "NAME" on URL`) so the
// caller can print one line "rlock: <context>: <error>".
int execute(const Invocation& inv, std::string& context);

// rlock's command line as it was given, before cli::main scrubbed argv
// (passwords included: run's release spec, for its release after its death).
const std::vector<std::string>& command_line_as_given();

// The whole program: parse argv, execute, turn errors into one line on stderr
// and an exit status.
int main(int argc, char** argv);

} // namespace rlock::cli
