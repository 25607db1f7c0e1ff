#pragma once

#include <fmt/format.h>

#include <cstdio>

namespace rlock::log {

enum class Level { quiet, normal, verbose };

// Set once by the CLI before any thread starts; read-only afterwards.
inline Level g_level = Level::normal;

// "rlock: warning: ..." on stderr, unless -q.
template <typename... Args> void warning(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level != Level::quiet) {
    fmt::print(stderr, "rlock: warning: {}\n", fmt::format(format, std::forward<Args>(args)...));
  }
}

// "rlock: ..." on stderr, unless -q: what rlock is doing, for people.
template <typename... Args> void info(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level != Level::quiet) {
    fmt::print(stderr, "rlock: {}\n", fmt::format(format, std::forward<Args>(args)...));
  }
}

// Only with -v: each Redis request and reply summary.
template <typename... Args> void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (g_level == Level::verbose) {
    fmt::print(stderr, "rlock: {}\n", fmt::format(format, std::forward<Args>(args)...));
  }
}

} // namespace rlock::log
