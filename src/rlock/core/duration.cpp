// Durations as users write them ("500ms", "1h30m", "0.5") and as rlock
// writes them back: parsed strictly, formatted briefly.

#include <rlock/core/duration.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

namespace rlock {

namespace {

constexpr double k_max_ms = 365.0 * 24 * 3600 * 1000;

double unit_ms(std::string_view unit) {
  if (unit == "ms") {
    return 1;
  }
  if (unit == "s" || unit.empty()) {
    return 1000;
  }
  if (unit == "m") {
    return 60'000;
  }
  if (unit == "h") {
    return 3'600'000;
  }
  if (unit == "d") {
    return 86'400'000;
  }
  return -1;
}

} // namespace

Millis parse_duration(std::string_view text, std::string_view flag, bool allow_zero) {
  auto fail = [&](std::string_view why) {
    return UsageError(
        fmt::format("{}: {} duration '{}' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)", flag, why, printable(text)));
  };
  if (text.empty()) {
    throw fail("empty");
  }
  if (text.front() == '-') {
    throw fail("negative");
  }
  double total = 0;
  std::size_t pos = 0;
  bool bare_number = true;
  double last_factor = 0; // the previous unit's size: each must be smaller
  while (pos < text.size()) {
    std::size_t start = pos;
    bool seen_dot = false;
    while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || (text[pos] == '.' && !seen_dot))) {
      seen_dot = seen_dot || text[pos] == '.';
      ++pos;
    }
    std::string number(text.substr(start, pos - start));
    if (number.empty() || number == ".") {
      throw fail("bad");
    }
    std::size_t unit_start = pos;
    while (pos < text.size() && text[pos] >= 'a' && text[pos] <= 'z') {
      ++pos;
    }
    std::string_view unit = text.substr(unit_start, pos - unit_start);
    if (unit.empty() && pos < text.size()) {
      throw fail("bad");
    }
    if (unit.empty() && !bare_number) {
      throw fail("bad"); // "1h30" is ambiguous
    }
    bare_number = bare_number && unit.empty();
    double factor = unit_ms(unit);
    if (factor < 0) {
      throw fail("bad");
    }
    if (last_factor != 0 && factor >= last_factor) {
      throw fail(factor == last_factor ? "repeated unit in" : "units out of order in"); // "30s30s", "5s1m"
    }
    last_factor = factor;
    total += std::strtod(number.c_str(), nullptr) * factor;
    if (total > k_max_ms) {
      throw fail("too long (over 365d)");
    }
  }
  // Rounded to the nearest ms by hand (total is >= 0 and at most k_max_ms):
  // std::round is the one function rlock would load libm.so.6 for, a shared
  // library more to map at each start (bench/README.md, "Start-up budget").
  double rounded = static_cast<double>(static_cast<long long>(total + 0.5));
  if (total == 0 && allow_zero) {
    return Millis(0);
  }
  if (rounded < 1) {
    throw fail(total == 0 ? "zero" : "too short (under 1ms)");
  }
  return Millis(static_cast<long long>(rounded));
}

std::string format_duration(Millis duration) {
  long long ms = duration.count();
  if (ms < 0) {
    return "-" + format_duration(Millis(-ms));
  }
  if (ms < 1000) {
    return fmt::format("{}ms", ms);
  }
  if (ms < 60'000) {
    long long tenths = (ms + 50) / 100;
    return tenths % 10 == 0 ? fmt::format("{}s", tenths / 10)
                            : fmt::format("{}.{}s", tenths / 10, tenths % 10);
  }
  long long s = ms / 1000;
  if (s < 3600) {
    return s % 60 ? fmt::format("{}m{}s", s / 60, s % 60) : fmt::format("{}m", s / 60);
  }
  if (s < 86400) {
    long long m = s / 60;
    return m % 60 ? fmt::format("{}h{}m", m / 60, m % 60) : fmt::format("{}h", m / 60);
  }
  long long h = s / 3600;
  return h % 24 ? fmt::format("{}d{}h", h / 24, h % 24) : fmt::format("{}d", h / 24);
}

} // namespace rlock
