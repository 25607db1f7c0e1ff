#pragma once

// What /proc says about processes and this boot, read without ever throwing.

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace rlock {

// The contents of /proc/<pid>/<what> (at most `limit` bytes), or "" when the
// process is gone or the file cannot be read. Never throws: processes vanish
// between listing /proc and reading it (iostreams would throw on ESRCH).
std::string read_proc(pid_t pid, const char* what, std::size_t limit = 4096);

// What /proc/<pid>/stat says about a process's life: its state letter (field 3),
// its parent (field 4) and its start time (field 22: clock ticks after boot). A pid with the same
// start time on the same boot is the same process; a reused pid has another.
struct ProcessStart {
  char state = '?';
  long long start_ticks = 0;
  pid_t parent = 0; // field 4
  // A zombie ('Z') or dead ('X') process has finished: it holds nothing.
  bool finished() const { return state == 'Z' || state == 'X'; }
};

// Parses the text of /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may
// hold spaces and parentheses). Nothing when it is not that shape.
std::optional<ProcessStart> parse_process_start(std::string_view stat);

// The state and start time of process `pid`; nothing when there is no such
// process (or /proc cannot be read). Never throws.
std::optional<ProcessStart> process_start(pid_t pid);

// This boot of this host: /proc/sys/kernel/random/boot_id (a random UUID the
// kernel makes at each boot), "" when it cannot be read. Never throws.
std::string boot_id();

} // namespace rlock
