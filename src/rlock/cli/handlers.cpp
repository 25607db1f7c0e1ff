// The steps more than one subcommand's handler takes (cli/handlers.hpp).

#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

namespace rlock::cli {

std::string json_line(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void print_json(const nlohmann::json& doc) {
  fmt::print("{}", json_line(doc));
}

std::string process_command(pid_t pid, bool with_args) {
  std::string text = read_proc(pid, "cmdline", 8192);
  std::vector<std::string> argv;
  for (std::size_t at = 0; at < text.size();) {
    auto end = std::min(text.find('\0', at), text.size());
    argv.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return recorded_command_line(argv, with_args);
}

lock::HolderInfo holder_info(pid_t pid, std::string command) {
  auto start = process_start(pid);
  return lock::HolderInfo{host_name(), pid, std::move(command), boot_id(),
                          start ? std::optional<long long>(start->start_ticks) : std::nullopt};
}

bool WaitLinePace::due(TimePoint now, const std::string& who) {
  if (m_last && who == m_who && now - *m_last < k_every) {
    return false;
  }
  m_last = now;
  m_who = who;
  return true;
}

WaitDisplay::WaitDisplay(lock::Mode asked) : m_asked(asked), m_terminal(isatty(STDERR_FILENO) != 0) {}

WaitDisplay::~WaitDisplay() {
  if (m_shown && m_terminal) {
    log::write("\r\033[K");
  }
}

void WaitDisplay::operator()(const std::string& name, const lock::Holder& holder, Millis wait_left) {
  // Whole seconds, for people: what is left rounded up (the first line says
  // -w's own "1h"), what has passed rounded down.
  auto left = [](Millis value) { return format_duration(std::chrono::ceil<std::chrono::seconds>(value)); };
  auto passed = [](Millis value) { return format_duration(std::chrono::floor<std::chrono::seconds>(value)); };
  if (m_terminal) {
    log::write(fmt::format("\r\033[Krlock: waiting for {} ({} to go): {}", quote(name), left(wait_left),
                           holder_phrase(holder, m_asked)));
    m_shown = true;
    return;
  }
  const TimePoint now = Clock::now();
  if (!m_pace.due(now, name + '\n' + holder.owner)) {
    return;
  }
  std::string since;
  if (holder.record && holder.record->acquired_at_ms) {
    since = "; held since " + utc_time(*holder.record->acquired_at_ms);
  }
  if (!m_began) {
    m_began = now;
    log::write(fmt::format("rlock: waiting up to {} for {}: {}{}\n", left(wait_left), quote(name),
                           holder_phrase(holder, m_asked), since));
  } else {
    log::write(fmt::format("rlock: still waiting for {} ({} so far, {} to go): {}{}\n", quote(name),
                           passed(std::chrono::duration_cast<Millis>(now - *m_began)), left(wait_left),
                           holder_phrase(holder, m_asked), since));
  }
  m_shown = true;
}

lock::NamedBusyCallback wait_display(WaitDisplay& display) {
  return log::g_level != log::Level::quiet ? lock::NamedBusyCallback(std::ref(display))
                                           : lock::NamedBusyCallback();
}

lock::AcquireRequest lock_request(const Context& ctx, lock::HolderInfo info) {
  const auto& inv = ctx.inv;
  lock::AcquireRequest request;
  request.keys = ctx.locks.front();
  request.mode = inv.mode;
  request.owner = inv.owner.empty() ? random_owner_token(info.pid > 0 ? info.pid : getpid()) : inv.owner;
  request.lease = inv.ttl.value_or(k_default_lease);
  request.info = std::move(info);
  request.wait = inv.wait;
  request.own_token = inv.owner.empty();
  request.sync = sync_for(inv.global, request.lease);
  return request;
}

void busy(const Context& ctx, const lock::Taken& taken) {
  const auto& inv = ctx.inv;
  const auto& name = ctx.locks[taken.busy].name;
  const auto& holder = taken.results[taken.busy].holder;
  if (inv.global.json) {
    nlohmann::json doc{{"name", name},
                       {"acquired", false},
                       {"holder", holder.owner},
                       {"type", holder_type_word(holder, inv.mode.mode)},
                       {"ttl_ms", holder.ttl.count()},
                       {"holder_info", holder_json(holder.record)}};
    if (auto held_as = held_as_word(holder, inv.mode.mode); !held_as.empty()) {
      doc["held_as"] = held_as;
    }
    print_json(doc);
  }
  // A conflict of layouts no release ends is said at once (lock::waiting_cannot_end).
  std::string why = !inv.wait ? std::string("busy")
                    : lock::waiting_cannot_end(inv.mode.mode, holder)
                        ? std::string("busy, and waiting cannot end it")
                        : fmt::format("still busy after waiting {}", format_duration(*inv.wait));
  throw Error(Outcome::busy, fmt::format("{}{}: {}", ctx.locks.size() > 1 ? quote(name) + " " : "", why,
                                         holder_phrase(holder, inv.mode.mode)));
}

std::string not_held_reason(lock::OwnerCheck check, const std::string& detail, lock::KeyType type,
                            lock::Layout layout) {
  switch (check) {
  case lock::OwnerCheck::missing:
    return "not held: no such lock (it expired or was released)";
  case lock::OwnerCheck::other:
    return fmt::format("not held by this owner: held by {}", printable(detail));
  case lock::OwnerCheck::foreign:
    return fmt::format("not a lock: the key is a {}{}; left untouched", lock::key_type_name(type),
                       type == lock::KeyType::string ? " (a --limit semaphore is released with --limit N)"
                                                     : "");
  case lock::OwnerCheck::layout:
    return fmt::format("not held in this mode: it is {}; {}", layout_phrase(layout, detail, false),
                       layout == lock::Layout::read        ? "give -s"
                       : layout == lock::Layout::write     ? "give --write"
                       : layout == lock::Layout::semaphore ? "give --limit N"
                                                           : "give no mode flag");
  default:
    return "";
  }
}

template <typename Result>
int per_lock_outcome(const Context& ctx, const std::vector<Result>& results,
                     const std::vector<std::exception_ptr>& errors, const char* done_key,
                     const std::function<void(nlohmann::json&, const Result&)>& extra) {
  const auto& inv = ctx.inv;
  if (results.size() == 1 && errors.front()) {
    std::rethrow_exception(errors.front());
  }
  nlohmann::json docs = nlohmann::json::array();
  int failed = -1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    bool done = !errors[i] && result.check == lock::OwnerCheck::ok;
    nlohmann::json doc{{"name", ctx.locks[i].name}, {"owner", inv.owner}, {done_key, done}};
    extra(doc, result);
    if (errors[i]) {
      try {
        std::rethrow_exception(errors[i]);
      } catch (const std::exception& e) {
        doc["error"] = e.what();
      }
    }
    docs.push_back(doc);
    if (failed < 0 && !done) {
      failed = static_cast<int>(i);
    }
  }
  if (inv.global.json) {
    print_json(results.size() == 1 ? docs.front() : nlohmann::json{{"locks", docs}});
  }
  if (failed < 0) {
    return 0;
  }
  // An error reaching Redis decides the exit over "not held"; the message names the lock.
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (errors[i]) {
      try {
        std::rethrow_exception(errors[i]);
      } catch (const RedisError& e) {
        throw RedisError(e.kind(), fmt::format("{}: {}", quote(ctx.locks[i].name), e.what()));
      }
    }
  }
  const auto& result = results[failed];
  throw Error(Outcome::not_held,
              fmt::format("{}{}", results.size() > 1 ? quote(ctx.locks[failed].name) + ": " : "",
                          not_held_reason(result.check, result.detail, result.type, result.layout)));
}

template int per_lock_outcome<lock::ReleaseResult>(
    const Context&, const std::vector<lock::ReleaseResult>&, const std::vector<std::exception_ptr>&,
    const char*, const std::function<void(nlohmann::json&, const lock::ReleaseResult&)>&);
template int
per_lock_outcome<lock::RenewResult>(const Context&, const std::vector<lock::RenewResult>&,
                                    const std::vector<std::exception_ptr>&, const char*,
                                    const std::function<void(nlohmann::json&, const lock::RenewResult&)>&);

} // namespace rlock::cli
