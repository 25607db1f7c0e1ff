// The holder record ('rlock:meta') and the once-per record, parsed once and
// tolerantly: anything malformed is left out, never trusted.

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

// The fields of a record: each value only when it has the right type and
// range. No exceptions: a parse error gives no fields. nlohmann's parser is
// iterative, and the scripts cap a record at 8 KiB, so nesting is harmless.
class Fields {
public:
  explicit Fields(std::string_view raw) : m_doc(nlohmann::json::parse(raw, nullptr, false)) {}

  std::optional<std::string> text(const char* key) const {
    const auto* value = find(key);
    return value ? lock::text(*value) : std::nullopt;
  }
  std::optional<long long> number(const char* key, long long low, long long high) const {
    const auto* value = find(key);
    return value ? whole_number(*value, low, high) : std::nullopt;
  }

private:
  const nlohmann::json* find(const char* key) const {
    if (!m_doc.is_object()) {
      return nullptr;
    }
    auto it = m_doc.find(key);
    return it == m_doc.end() ? nullptr : &*it;
  }

  nlohmann::json m_doc;
};

} // namespace

bool HolderRecord::readable() const {
  return host || pid || command || acquired_at_ms || ttl_ms || fence || version || since_ms || until_ms ||
         renewed_at_ms || kept_until_ms || turns || boot_id || start_ticks;
}

HolderRecord parse_holder_record(std::string_view raw) {
  HolderRecord record;
  Fields fields(raw);
  record.host = fields.text("host");
  record.pid = fields.number("pid", 1, k_max_pid);
  record.command = fields.text("command");
  record.acquired_at_ms = fields.number("acquired_at_ms", 0, k_max_epoch_ms);
  record.ttl_ms = fields.number("ttl_ms", 1, k_max_ttl_ms);
  record.fence = fields.number("fence", 0, k_max_fence);
  record.version = fields.text("version");
  record.since_ms = fields.number("since_ms", 0, k_max_epoch_ms);
  record.until_ms = fields.number("until_ms", 0, k_max_epoch_ms);
  record.renewed_at_ms = fields.number("renewed_at_ms", 0, k_max_epoch_ms);
  record.kept_until_ms = fields.number("kept_until_ms", 0, k_max_epoch_ms);
  record.turns = fields.number("turns", 1, 1);
  record.boot_id = fields.text("boot_id");
  record.start_ticks = fields.number("start_ticks", 0, std::numeric_limits<long long>::max());
  return record;
}

DoneRecord parse_done_record(std::string_view raw, long long ttl_ms) {
  DoneRecord record;
  record.ttl_ms = ttl_ms;
  Fields fields(raw);
  record.window_start_ms = fields.number("window_start_ms", 0, k_max_epoch_ms);
  record.window_end_ms = fields.number("window_end_ms", 1, k_max_epoch_ms);
  if (record.window_start_ms && record.window_end_ms && *record.window_end_ms <= *record.window_start_ms) {
    record.window_start_ms.reset();
    record.window_end_ms.reset();
  }
  record.host = fields.text("host");
  record.pid = fields.number("pid", 1, k_max_pid);
  record.command = fields.text("command");
  record.done_at_ms = fields.number("done_at_ms", 0, k_max_epoch_ms);
  record.exit = fields.number("exit", 0, 255);
  if (auto op = fields.text("op"); op && op->size() <= 64) {
    record.op = *op;
  }
  return record;
}

} // namespace rlock::lock
