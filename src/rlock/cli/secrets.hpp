#pragma once

// Passwords (where they come from, never shown, scrubbed from argv) and the
// one rule for what is recorded of a command line.

#include <rlock/cli/options.hpp>
#include <rlock/redis/url.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// The endpoint of the invocation's first URL with the password filled in from
// the URL, --password-file / RLOCK_PASSWORD_FILE, RLOCK_PASSWORD or
// REDISCLI_AUTH, in that order. Throws UsageError (64) for a password file
// that cannot be read, is a directory or is empty.
redis::Endpoint resolve_endpoint(const GlobalOptions& global);
// The same for every URL of the invocation (several: a Redlock quorum).
std::vector<redis::Endpoint> resolve_endpoints(const GlobalOptions& global);

// A command line made fit to be recorded where any Redis client can read it:
// the password of every URL ("redis://u:***@h"), the value of NAME=VALUE words
// whose NAME mentions PASS, AUTH, SECRET or TOKEN, and the word after -a,
// --pass, --password or --auth (redis-cli and friends) become "***".
std::string redact_command_line(std::string_view command);

// The one rule for a command line that rlock records (the holder record, a
// fair waiter's record, `status`, the history): what any Redis client may read
// for days. By default the program (argv[0]) and, for each argument, "***":
// an argument can be a secret in a shape no list of patterns knows
// (mysqldump -pSECRET, --api-key=..., "Authorization: Bearer ..."). With
// `with_args` (--record-args, RLOCK_RECORD_ARGS=1) the arguments too, each
// with redact_command_line's masks as one word (spaces and all), joined by
// spaces. At most `max_bytes`, then "...".
// Pure.
std::string recorded_command_line(const std::vector<std::string>& argv, bool with_args, std::size_t max_bytes = 200);

// Overwrites, in rlock's own argv, the password of every URL with '*', so
// that `ps` and /proc/PID/cmdline stop showing it once rlock has started.
void scrub_argv(int argc, char** argv);

} // namespace rlock::cli
