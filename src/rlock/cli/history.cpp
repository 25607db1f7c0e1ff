#include <rlock/cli/history.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ctime>

namespace rlock::cli {

std::string event_time(long long at_ms, bool utc) {
  std::time_t seconds = static_cast<std::time_t>(at_ms / 1000);
  int millis = static_cast<int>(at_ms % 1000);
  std::tm tm{};
  if (utc ? gmtime_r(&seconds, &tm) == nullptr : localtime_r(&seconds, &tm) == nullptr) {
    return fmt::format("@{}", at_ms);
  }
  char text[64];
  if (utc) {
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03}Z", text, millis);
  }
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  char zone[16];
  std::strftime(zone, sizeof zone, "%z", &tm);
  return fmt::format("{}.{:03} {}", text, millis, zone);
}

namespace {

// The document's version, as status's and doctor's: up only when a field changes meaning or goes away.
constexpr int k_history_schema = 1;

std::string history_merge_note(const HistoryView& view) {
  return fmt::format("the majority's view: events held by at least {} of {} masters, matched by kind, owner, "
                     "host, pid, command and counts (not times or fences, which each master keeps itself)",
                     view.masters / 2 + 1, view.masters);
}

std::string history_text(const std::string& name, const lock::History& history, const HistoryView& view) {
  std::string out;
  for (const auto& event : history.events) {
    if (event.malformed) {
      out += fmt::format("{}  (malformed entry{})\n", event.at_ms > 0 ? event_time(event.at_ms, view.utc) : "?",
                         event.id.empty() ? "" : " " + printable(event.id));
      continue;
    }
    out += fmt::format("{}  {}", event_time(event.at_ms, view.utc), printable(event.kind));
    for (const auto& [field, value] : event.fields) {
      // Quoted when escaping changed it or it has a space, quote or '=': one
      // field's value never reads as the next field.
      auto shown = printable(value);
      bool plain = !value.empty() && shown == value && value.find_first_of(" \"\\=") == std::string::npos;
      out += fmt::format(" {}={}", printable(field), plain ? shown : quote(value));
    }
    if (view.masters > 1) {
      out += fmt::format(" masters={}/{}", event.seen_on, view.masters);
    }
    out += '\n';
  }
  if (view.masters > 1) {
    out += fmt::format("# {}\n", history_merge_note(view));
  }
  if (history.redisson) {
    out += fmt::format("{}: made by Redisson: no history (Redisson writes none){}\n", quote(name),
                       history.events.empty() ? "" : "; the events above are older rlock holds");
  } else if (history.events.empty()) {
    out += fmt::format("{}: no history (never changed by rlock, or none within RLOCK_HISTORY_TTL)\n", quote(name));
  }
  return out;
}

nlohmann::json history_json(const std::string& name, const lock::History& history, const HistoryView& view) {
  auto events = nlohmann::json::array();
  for (const auto& event : history.events) {
    nlohmann::json fields = nlohmann::json::object();
    for (const auto& [field, value] : event.fields) {
      fields[field] = value;
    }
    nlohmann::json doc{{"id", event.id}, {"malformed", event.malformed}};
    if (!event.malformed) {
      doc["at_ms"] = event.at_ms;
      doc["time"] = event_time(event.at_ms, true);
      doc["kind"] = event.kind;
      doc["fields"] = fields;
    }
    if (view.masters > 1) {
      doc["masters"] = event.seen_on;
    }
    events.push_back(doc);
  }
  nlohmann::json doc{{"schema", k_history_schema},
                     {"name", name},
                     {"type", history.type},
                     {"made_by_redisson", history.redisson},
                     {"events", events}};
  if (view.masters > 1) {
    doc["merge"] = history_merge_note(view);
  }
  return doc;
}

} // namespace

std::string render_history(const std::string& name, const lock::History& history, const HistoryView& view) {
  if (view.json) {
    return history_json(name, history, view).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return history_text(name, history, view);
}

} // namespace rlock::cli
