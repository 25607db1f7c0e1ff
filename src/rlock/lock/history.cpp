// A lock's history: the event context scripts append to rlock_log:{NAME},
// the client's own events, reading the stream, and a Redlock's majority merge.

#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/core/version.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/mode.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>

namespace rlock::lock {

namespace {

struct HistoryConfig {
  HistorySettings settings;
  HolderInfo who;
  TimePoint started = Clock::now();
  EventFields ending; // ("as", kind), ("as_why", why) while a HistoryEnding lives
};

HistoryConfig& history_config() {
  static HistoryConfig value;
  return value;
}

constexpr std::size_t k_event_max_fields = 64;
constexpr std::size_t k_event_max_value = 1024;

// Set once the user was found not to be allowed the history key: history is
// off for the rest of this process (read by every thread).
std::atomic<bool> g_history_refused{false};

} // namespace

HistoryEnding::HistoryEnding(std::string kind, std::string why) {
  history_config().ending = {{"as", std::move(kind)}, {"as_why", why.substr(0, 300)}};
}

HistoryEnding::~HistoryEnding() {
  history_config().ending.clear();
}

void configure_history(const HistorySettings& settings, const HolderInfo& who) {
  auto& c = history_config();
  c.settings = settings;
  c.who = who;
}

long long waited_ms() {
  return std::chrono::duration_cast<Millis>(Clock::now() - history_config().started).count();
}

EventFields acquisition_history(const AcquireRequest& request) {
  return {{"mode", std::string(mode_name(request.mode.mode))}, {"waited_ms", std::to_string(waited_ms())}};
}

EventFields release_history(Mode mode) {
  return {{"mode", std::string(mode_name(mode))}};
}

bool carries_history(const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  return keys.size() > 1 && !args.empty() && keys.back().starts_with("rlock_log:") && args.back().starts_with('[');
}

std::string history_acl(const std::string& user, const std::string& log_key) {
  // The key as a glob matching only itself: * ? [ in brackets (copied from a
  // terminal as they are, unlike a backslash, which messages double).
  std::string pattern;
  for (char c : log_key) {
    if (c == '*' || c == '?' || c == '[') {
      pattern += fmt::format("[{}]", c);
    } else if (c == '\\') {
      pattern += "\\\\";
    } else {
      pattern += c;
    }
  }
  return fmt::format("ACL SETUSER {} ~{}", user.empty() ? "default" : user, pattern);
}

void history_refused(const std::string& user, const std::string& log_key) {
  if (g_history_refused.exchange(true)) {
    return;
  }
  log::warning("history not written: this Redis user may not use the key {}; locking goes on without it. "
               "To keep the history: {} (for names under a prefix, docs/security.md's ~rlock_log:{{PREFIX* pattern), "
               "or RLOCK_HISTORY_MAXLEN=0 to write none",
               quote(log_key), printable(history_acl(user, log_key)));
}

void with_history(std::vector<std::string>& keys, std::vector<std::string>& args, const LockKeys& lock,
                  const EventFields& extras) {
  const auto& c = history_config();
  if (c.settings.max_len <= 0 || g_history_refused.load()) {
    return;
  }
  auto ctx = nlohmann::json::array({c.settings.max_len, c.settings.ttl.count(), "host", c.who.host, "pid",
                                    std::to_string(c.who.pid), "cmd", c.who.command, "ver", RLOCK_VERSION});
  for (const auto& [field, value] : extras) {
    ctx.push_back(field);
    ctx.push_back(value);
  }
  for (const auto& [field, value] : c.ending) {
    ctx.push_back(field);
    ctx.push_back(value);
  }
  keys.push_back(lock.log);
  args.push_back(ctx.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void log_client_event(redis::Client& client, const LockKeys& lock, const std::string& kind,
                      const std::string& owner, const EventFields& extras) {
  try {
    std::vector<std::string> keys{lock.name};
    std::vector<std::string> args{kind, owner, std::string(redis::k_deadline_slot)};
    with_history(keys, args, lock, extras);
    if (keys.size() < 2) {
      return;
    }
    redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), redis::RetryPolicy::Mode::once), false,
                            std::nullopt, {}};
    detail::run_script(client, scope, scripts::log_event, keys, args);
  } catch (const std::exception&) {
    // best effort: the history misses this event
  }
}

std::string HistoryEvent::get(std::string_view field) const {
  for (const auto& [name, value] : fields) {
    if (name == field) {
      return value;
    }
  }
  return {};
}

namespace {

// "1700000000000-3" -> 1700000000000; nullopt when it is no stream id.
std::optional<long long> stream_id_ms(const std::string& id) {
  auto dash = id.find('-');
  if (dash == 0 || dash == std::string::npos || dash > 15) {
    return std::nullopt;
  }
  long long value = 0;
  for (std::size_t i = 0; i < dash; ++i) {
    if (id[i] < '0' || id[i] > '9') {
      return std::nullopt;
    }
    value = value * 10 + (id[i] - '0');
  }
  return value;
}

HistoryEvent decode_event(const redis::Reply& entry) {
  HistoryEvent event;
  event.malformed = true;
  if (!entry.is_array() || entry.elements.size() != 2 || entry.elements[0].type != redis::Reply::Type::string) {
    return event;
  }
  event.id = entry.elements[0].str.substr(0, 64);
  auto at = stream_id_ms(event.id);
  const auto& fields = entry.elements[1];
  if (!at || !fields.is_array() || fields.elements.size() % 2 != 0) {
    return event;
  }
  event.at_ms = *at;
  for (std::size_t f = 0; f + 1 < fields.elements.size() && event.fields.size() < k_event_max_fields; f += 2) {
    const auto& name = fields.elements[f];
    const auto& value = fields.elements[f + 1];
    if (name.type != redis::Reply::Type::string || value.type != redis::Reply::Type::string) {
      return event;
    }
    if (name.str == "kind" && event.kind.empty()) {
      event.kind = value.str.substr(0, 64);
      continue;
    }
    event.fields.emplace_back(name.str.substr(0, k_event_max_value), value.str.substr(0, k_event_max_value));
  }
  event.malformed = event.kind.empty();
  return event;
}

} // namespace

History decode_history(const redis::Reply& reply) {
  History history;
  const auto& events = detail::element(reply, 0);
  history.type = key_type_of(detail::optional_string(reply, 1));
  const auto& redisson = detail::element(reply, 2);
  history.redisson = redisson.type == redis::Reply::Type::integer && redisson.integer == 1;
  if (reply.elements.size() > 5) {
    history.ours = reply.elements[5].type == redis::Reply::Type::integer && reply.elements[5].integer == 1;
  }
  if (reply.elements.size() > 4) {
    const auto& log_type = reply.elements[3];
    const auto& writable = reply.elements[4];
    if (log_type.type == redis::Reply::Type::string) {
      history.log_type = key_type_of(log_type.str);
    }
    bool can_write = writable.type == redis::Reply::Type::integer && writable.integer == 1;
    bool cannot_write = writable.type == redis::Reply::Type::integer && writable.integer == 0;
    history.access = !history.log_type                                                        ? LogAccess::no_read
                     : *history.log_type != KeyType::stream && *history.log_type != KeyType::none ? LogAccess::not_stream
                     : cannot_write                                                           ? LogAccess::no_write
                     : can_write                                                              ? LogAccess::writable
                                                                                              : LogAccess::unknown;
  }
  // XREVRANGE: newest first; shown oldest first.
  for (auto it = events.elements.rbegin(); it != events.elements.rend(); ++it) {
    history.events.push_back(decode_event(*it));
  }
  return history;
}

History read_history(redis::Client& client, const LockKeys& lock, int limit) {
  const std::vector<std::string> args{std::to_string(limit)};
  try {
    return decode_history(
        detail::run_script(client, one_shot(client, false), scripts::history_read, {lock.name, lock.log}, args).reply);
  } catch (const RedisError& e) {
    if (!denies_a_key(e)) {
      throw;
    }
  }
  // Perhaps the history key alone is refused: read the lock without it, and
  // say so (if NAME itself is refused, this throws that).
  auto history =
      decode_history(detail::run_script(client, one_shot(client, false), scripts::history_read, {lock.name}, args).reply);
  history.access = LogAccess::no_read;
  return history;
}

History merge_majority(const std::vector<History>& per_master, int need, int limit) {
  // An event's identity across masters: every field but the times and the fence.
  auto identity = [](const HistoryEvent& event) {
    std::string key = event.kind;
    for (const auto& [name, value] : event.fields) {
      if (name == "fence" || name.ends_with("_ms")) {
        continue;
      }
      key += '\x1f' + name + '=' + value;
    }
    return key;
  };
  struct Seen {
    HistoryEvent event;
    int masters = 0;
  };
  std::map<std::pair<std::string, int>, Seen> seen;
  History merged;
  merged.access = LogAccess::writable;
  for (const auto& history : per_master) {
    merged.redisson = merged.redisson || history.redisson;
    // The least access any master gives (the enum is ordered from most to least).
    if (history.access > merged.access || !merged.log_type) {
      merged.access = std::max(merged.access, history.access);
      merged.log_type = history.log_type;
    }
    if (history.type != KeyType::none) {
      merged.type = history.type;
    }
    std::map<std::string, int> occurrences;
    for (const auto& event : history.events) {
      if (event.malformed) {
        continue;
      }
      auto key = identity(event);
      auto& entry = seen[{key, occurrences[key]++}];
      if (entry.masters == 0) {
        entry.event = event;
      } else {
        if (event.at_ms < entry.event.at_ms) {
          entry.event.at_ms = event.at_ms;
          entry.event.id = event.id;
        }
        auto fence = event.get("fence");
        auto kept = entry.event.get("fence");
        if (!fence.empty() && (kept.empty() || fence.size() > kept.size() ||
                               (fence.size() == kept.size() && fence > kept))) {
          for (auto& [name, value] : entry.event.fields) {
            if (name == "fence") {
              value = fence;
            }
          }
        }
      }
      ++entry.masters;
    }
  }
  for (auto& [key, entry] : seen) {
    if (entry.masters >= need) {
      entry.event.seen_on = entry.masters;
      merged.events.push_back(std::move(entry.event));
    }
  }
  std::stable_sort(merged.events.begin(), merged.events.end(),
                   [](const auto& a, const auto& b) { return a.at_ms < b.at_ms; });
  if (limit > 0 && merged.events.size() > static_cast<std::size_t>(limit)) {
    merged.events.erase(merged.events.begin(), merged.events.end() - limit);
  }
  return merged;
}

} // namespace rlock::lock
