#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace rlock {

using Millis = std::chrono::milliseconds;

// Parses "500ms", "30s", "5m", "2h", "1h30m", "1d", or a bare number of seconds
// with an optional fraction ("0.5"). Throws UsageError naming `flag` when the value
// is empty, unparsable, zero, negative, below 1ms or above 365 days.
Millis parse_duration(std::string_view text, std::string_view flag);

// Short human form: "850ms", "29.5s", "4m10s", "2h5m", "3d4h".
std::string format_duration(Millis duration);

} // namespace rlock
