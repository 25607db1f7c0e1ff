#pragma once

// Durations: Millis, and the parser and formatter of "500ms", "1h30m", "0.5".

#include <chrono>
#include <string>
#include <string_view>

namespace rlock {

using Millis = std::chrono::milliseconds;

// Parses "500ms", "30s", "5m", "2h", "1h30m", "1d", or a bare number of seconds
// with an optional fraction ("0.5"). Units go from largest to smallest, each at
// most once. Throws UsageError naming `flag` when the value is empty,
// unparsable, negative, below 1ms, above 365 days, repeats or misorders a unit
// ("30s30s"), or is zero (unless `allow_zero`: then zero is Millis(0)).
Millis parse_duration(std::string_view text, std::string_view flag, bool allow_zero = false);

// Short human form: "850ms", "29.5s", "4m10s", "2h5m", "3d4h".
std::string format_duration(Millis duration);

} // namespace rlock
