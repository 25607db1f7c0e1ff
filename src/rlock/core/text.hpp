#pragma once

#include <string>
#include <string_view>

namespace rlock {

// Makes arbitrary bytes safe for a one-line message: control characters, quotes
// and backslashes are escaped (\n, \t, \", \\, \xNN); valid UTF-8 is kept.
std::string printable(std::string_view bytes);

// printable() in double quotes, for naming a lock in messages.
std::string quote(std::string_view bytes);

// A random token that looks like a Redisson owner field: "<uuid4>:<pid>".
std::string random_owner_token();

// This machine's host name, or "unknown".
std::string host_name();

} // namespace rlock
