#pragma once

// Logging to stderr that never blocks: warning, info, error, debug by level.

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <string_view>

namespace rlock::log {

enum class Level { quiet, normal, verbose };

// Set once by the CLI before any thread starts; read-only afterwards.
inline Level g_level = Level::normal;

// Writes `text` to stderr without ever blocking: a full pipe or a stopped
// terminal must not delay what rlock does next (stopping CMD, renewing). What
// cannot be written now is kept (up to 64 KiB; beyond that, dropped and
// counted) and written by later calls or flush(). Thread-safe; never throws.
// The stderr of CMD is the same pipe or terminal: rlock writes through a
// non-blocking open file description of its own, so CMD's descriptor is
// unchanged.
void write(std::string_view text) noexcept;

// Waits up to `limit` for kept text to reach stderr; for the end of the
// program, when nothing else is left to do. Never throws.
void flush(std::chrono::milliseconds limit) noexcept;

// "rlock: warning: ..." on stderr, unless -q.
template <typename... Args> void warning(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level != Level::quiet) {
    write(fmt::format("rlock: warning: {}\n", fmt::format(format, std::forward<Args>(args)...)));
  }
}

// "rlock: ..." on stderr, unless -q: what rlock is doing, for people.
template <typename... Args> void info(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level != Level::quiet) {
    write(fmt::format("rlock: {}\n", fmt::format(format, std::forward<Args>(args)...)));
  }
}

// "rlock: ..." on stderr even with -q: the one error line of a failing command
// and what `run` did to CMD.
template <typename... Args> void error(fmt::format_string<Args...> format, Args&&... args) {
  write(fmt::format("rlock: {}\n", fmt::format(format, std::forward<Args>(args)...)));
}

// The time of a -v line, local and short: "12:03:04.123" for `epoch_ms`.
std::string debug_stamp(long long epoch_ms);

// Only with -v: each Redis request and reply summary, each line with its time
// ("rlock: 12:03:04.123 ..."; the other levels have none).
template <typename... Args> void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level == Level::verbose) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    write(fmt::format("rlock: {} {}\n", debug_stamp(now.count()),
                      fmt::format(format, std::forward<Args>(args)...)));
  }
}

} // namespace rlock::log
