#include <rlock/lock/record.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace rlock::lock {

namespace {

constexpr std::size_t k_max_string = 1024;
constexpr long long k_max_pid = std::numeric_limits<std::int32_t>::max();
constexpr long long k_max_epoch_ms = 253'402'300'799'999; // 9999-12-31T23:59:59.999Z
constexpr long long k_max_ttl_ms = 365LL * 24 * 3600 * 1000;
constexpr long long k_max_fence = std::numeric_limits<long long>::max();

// A whole number in [low, high]: an integer, or a float with no fraction that a
// double holds exactly (cjson writes large numbers that way).
std::optional<long long> whole_number(const nlohmann::json& value, long long low, long long high) {
  long long number = 0;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    number = value.get<long long>();
  } else if (value.is_number_unsigned()) {
    auto u = value.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
      return std::nullopt;
    }
    number = static_cast<long long>(u);
  } else if (value.is_number_float()) {
    double d = value.get<double>();
    constexpr double k_exact = 9'007'199'254'740'992.0; // 2^53
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > k_exact) {
      return std::nullopt;
    }
    number = static_cast<long long>(d);
  } else {
    return std::nullopt;
  }
  if (number < low || number > high) {
    return std::nullopt;
  }
  return number;
}

// A string, cut to k_max_string bytes at a UTF-8 character boundary.
std::optional<std::string> text(const nlohmann::json& value) {
  if (!value.is_string()) {
    return std::nullopt;
  }
  std::string out = value.get<std::string>();
  if (out.size() > k_max_string) {
    std::size_t cut = k_max_string;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    out.resize(cut);
  }
  return out;
}

} // namespace

bool HolderRecord::readable() const {
  return host || pid || command || acquired_at_ms || ttl_ms || fence || version || since_ms ||
         renewed_at_ms || boot_id || start_ticks;
}

HolderRecord parse_holder_record(std::string_view raw) {
  HolderRecord record;
  // No exceptions: a parse error gives a discarded value. nlohmann's parser is
  // iterative, and the scripts cap the value at 8 KiB, so nesting is harmless.
  auto doc = nlohmann::json::parse(raw, nullptr, false);
  if (!doc.is_object()) {
    return record;
  }
  auto field = [&](const char* key) -> const nlohmann::json* {
    auto it = doc.find(key);
    return it == doc.end() ? nullptr : &*it;
  };
  if (const auto* v = field("host")) {
    record.host = text(*v);
  }
  if (const auto* v = field("pid")) {
    record.pid = whole_number(*v, 1, k_max_pid);
  }
  if (const auto* v = field("command")) {
    record.command = text(*v);
  }
  if (const auto* v = field("acquired_at_ms")) {
    record.acquired_at_ms = whole_number(*v, 0, k_max_epoch_ms);
  }
  if (const auto* v = field("ttl_ms")) {
    record.ttl_ms = whole_number(*v, 1, k_max_ttl_ms);
  }
  if (const auto* v = field("fence")) {
    record.fence = whole_number(*v, 0, k_max_fence);
  }
  if (const auto* v = field("version")) {
    record.version = text(*v);
  }
  if (const auto* v = field("since_ms")) {
    record.since_ms = whole_number(*v, 0, k_max_epoch_ms);
  }
  if (const auto* v = field("renewed_at_ms")) {
    record.renewed_at_ms = whole_number(*v, 0, k_max_epoch_ms);
  }
  if (const auto* v = field("boot_id")) {
    record.boot_id = text(*v);
  }
  if (const auto* v = field("start_ticks")) {
    record.start_ticks = whole_number(*v, 0, std::numeric_limits<long long>::max());
  }
  return record;
}

DoneRecord parse_done_record(std::string_view raw, long long ttl_ms) {
  DoneRecord record;
  record.ttl_ms = ttl_ms;
  auto doc = nlohmann::json::parse(raw, nullptr, false);
  if (!doc.is_object()) {
    return record;
  }
  auto field = [&](const char* key) -> const nlohmann::json* {
    auto it = doc.find(key);
    return it == doc.end() ? nullptr : &*it;
  };
  if (const auto* v = field("window_start_ms")) {
    record.window_start_ms = whole_number(*v, 0, k_max_epoch_ms);
  }
  if (const auto* v = field("window_end_ms")) {
    record.window_end_ms = whole_number(*v, 1, k_max_epoch_ms);
  }
  if (record.window_start_ms && record.window_end_ms && *record.window_end_ms <= *record.window_start_ms) {
    record.window_start_ms.reset();
    record.window_end_ms.reset();
  }
  if (const auto* v = field("host")) {
    record.host = text(*v);
  }
  if (const auto* v = field("pid")) {
    record.pid = whole_number(*v, 1, k_max_pid);
  }
  if (const auto* v = field("command")) {
    record.command = text(*v);
  }
  if (const auto* v = field("done_at_ms")) {
    record.done_at_ms = whole_number(*v, 0, k_max_epoch_ms);
  }
  if (const auto* v = field("exit")) {
    record.exit = whole_number(*v, 0, 255);
  }
  if (const auto* v = field("op"); v != nullptr && v->is_string() && v->get<std::string>().size() <= 64) {
    record.op = v->get<std::string>();
  }
  return record;
}

} // namespace rlock::lock
