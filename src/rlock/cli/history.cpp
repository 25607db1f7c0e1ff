// `rlock history`'s output: a lock's events as text (one line each) or JSON,
// and what an empty history means when the history key could not be written.

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

// What an empty (or short) history means when the key could not take events:
// "" when it could.
std::string unwritable_note(const std::string& name, const lock::History& history, const std::string& log_key,
                            const std::string& acl) {
  switch (history.access) {
  case lock::LogAccess::not_stream:
    return fmt::format("{}: no history can be written: {} is a {}, not a stream (changes are made, not logged); "
                       "delete it to let rlock write the history",
                       quote(name), quote(log_key), lock::key_type_name(history.log_type.value_or(lock::KeyType::none)));
  case lock::LogAccess::no_write:
    return fmt::format("{}: this Redis user may not write the history key {} (XADD): its changes are not "
                       "logged; to log them: {} +xadd",
                       quote(name), quote(log_key), printable(acl));
  default:
    return "";
  }
}

// A time as a field's value: quoted when it has spaces (local time's).
std::string quote_if_spaced(const std::string& text) {
  return text.find(' ') == std::string::npos ? text : "\"" + text + "\"";
}

// The fields of `event` as shown, in order. A force-unlocked event records the
// removed hold's owner with the context of the rlock that removed it (host,
// pid, cmd, ver): those four are shown last, as by_host, by_pid, by_cmd and
// by_ver, so that whose hold ended (owner) and who ended it read apart. The
// stored fields (and JSON) are unchanged, so older events read the same way.
lock::EventFields shown_fields(const lock::HistoryEvent& event) {
  if (event.kind != "force-unlocked") {
    return event.fields;
  }
  lock::EventFields hold;
  lock::EventFields remover;
  for (const auto& [field, value] : event.fields) {
    if (field == "host" || field == "pid" || field == "cmd" || field == "ver") {
      remover.emplace_back("by_" + field, value);
    } else {
      hold.emplace_back(field, value);
    }
  }
  hold.insert(hold.end(), remover.begin(), remover.end());
  return hold;
}

std::string history_text(const std::string& name, const lock::History& history, const HistoryView& view,
                         const std::string& log_key, const std::string& acl) {
  std::string out;
  for (const auto& event : history.events) {
    if (event.malformed) {
      out += fmt::format("{}  (malformed entry{})\n", event.at_ms > 0 ? event_time(event.at_ms, view.utc) : "?",
                         event.id.empty() ? "" : " " + printable(event.id));
      continue;
    }
    out += fmt::format("{}  {}", event_time(event.at_ms, view.utc), printable(event.kind));
    for (const auto& [field, value] : shown_fields(event)) {
      // A time (ended_at_ms: server ms) is shown as the event times are:
      // ended_at=TIME.
      if (field.ends_with("_at_ms") && !value.empty() && value.size() <= 15 &&
          value.find_first_not_of("0123456789") == std::string::npos) {
        out += fmt::format(" {}={}", printable(field.substr(0, field.size() - 3)),
                           quote_if_spaced(event_time(std::stoll(value), view.utc)));
        continue;
      }
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
  auto note = unwritable_note(name, history, log_key, acl);
  if (!note.empty()) {
    out += note + "\n";
  } else if (history.redisson) {
    out += fmt::format("{}: made by Redisson: no history (Redisson writes none){}\n", quote(name),
                       history.events.empty() ? "" : "; the events above are older rlock holds");
  } else if (history.events.empty()) {
    out += fmt::format("{}: no history (never changed by rlock, or none within RLOCK_HISTORY_TTL; a client "
                       "whose Redis user may not write {} locks without logging)\n",
                       quote(name), quote(log_key));
  }
  return out;
}

std::string_view access_word(lock::LogAccess access) {
  switch (access) {
  case lock::LogAccess::writable:
    return "writable";
  case lock::LogAccess::unknown:
    return "unknown";
  case lock::LogAccess::not_stream:
    return "not a stream";
  case lock::LogAccess::no_write:
    return "no write permission";
  case lock::LogAccess::no_read:
    return "no permission";
  }
  return "unknown";
}

nlohmann::json history_json(const std::string& name, const lock::History& history, const HistoryView& view,
                            const std::string& log_key, const std::string& acl) {
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
                     {"type", lock::key_type_name(history.type)},
                     {"made_by_redisson", history.redisson},
                     {"log", {{"key", log_key},
                              {"type", history.log_type ? nlohmann::json(lock::key_type_name(*history.log_type)) : nlohmann::json(nullptr)},
                              {"access", access_word(history.access)},
                              {"note", unwritable_note(name, history, log_key, acl)}}},
                     {"events", events}};
  if (view.masters > 1) {
    doc["merge"] = history_merge_note(view);
  }
  return doc;
}

} // namespace

std::string render_history(const std::string& name, const lock::History& history, const HistoryView& view,
                           const std::string& log_key, const std::string& acl) {
  if (view.json) {
    return history_json(name, history, view, log_key, acl).dump(-1, ' ', false,
                                                                nlohmann::json::error_handler_t::replace) +
           "\n";
  }
  return history_text(name, history, view, log_key, acl);
}

std::string history_unreadable(const std::string& log_key, const std::string& acl) {
  return fmt::format("this Redis user may not read the history key {}; to read it: {} +xrevrange", quote(log_key),
                     printable(acl));
}

} // namespace rlock::cli
