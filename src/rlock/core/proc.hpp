#pragma once

#include <string>
#include <sys/types.h>

namespace rlock {

// The contents of /proc/<pid>/<what> (at most `limit` bytes), or "" when the
// process is gone or the file cannot be read. Never throws: processes vanish
// between listing /proc and reading it (iostreams would throw on ESRCH).
std::string read_proc(pid_t pid, const char* what, std::size_t limit = 4096);

} // namespace rlock
