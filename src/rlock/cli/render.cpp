#include <rlock/cli/render.hpp>
#include <rlock/core/text.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

namespace rlock::cli {

std::string utc_time(long long epoch_ms) {
  std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", tm);
}

namespace {

std::string ttl_phrase(Millis ttl) {
  if (ttl.count() == -1) {
    return "no expiry";
  }
  if (ttl.count() < 0) {
    return "expiring";
  }
  return format_duration(ttl) + " left";
}

// " on host (pid 12, "cmd")", or as much of it as the record says.
std::string record_phrase(const lock::HolderRecord& record) {
  if (!record.host && !record.pid && !record.command) {
    return " (holder unknown: unreadable rlock:meta)";
  }
  std::string out = record.host ? " on " + printable(*record.host) : std::string(" on an unknown host");
  std::string details;
  if (record.pid) {
    details = fmt::format("pid {}", *record.pid);
  }
  if (record.command) {
    details += (details.empty() ? "" : ", ") + quote(*record.command);
  }
  return details.empty() ? out : fmt::format("{} ({})", out, details);
}

template <class T> nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace

std::string layout_word(lock::Layout layout, std::string_view other_word) {
  switch (layout) {
  case lock::Layout::none:
    return "";
  case lock::Layout::exclusive:
    return "exclusive";
  case lock::Layout::fair:
    return "fair";
  case lock::Layout::read:
    return "read";
  case lock::Layout::write:
    return "write";
  case lock::Layout::semaphore:
    return "semaphore";
  case lock::Layout::other:
    break;
  }
  return std::string(other_word);
}

std::string mode_word(const lock::LockState& state) {
  return layout_word(state.layout, state.mode_field);
}

bool every_permit_taken(const lock::Holder& holder, lock::Mode asked) {
  return asked == lock::Mode::limit && holder.layout == lock::Layout::semaphore;
}

std::string held_as_word(const lock::Holder& holder, lock::Mode asked) {
  if (holder.queue_turn) {
    return "queue";
  }
  return every_permit_taken(holder, asked) ? "" : layout_word(holder.layout, "?");
}

std::string holder_type_word(const lock::Holder& holder, lock::Mode asked) {
  return std::string(every_permit_taken(holder, asked) ? "semaphore" : lock::key_type_name(holder.type));
}

std::string_view mode_word(lock::Mode mode) {
  return lock::mode_name(mode);
}

std::string_view verdict_word(lock::Verdict verdict) {
  switch (verdict) {
  case lock::Verdict::ok:
    return "ok";
  case lock::Verdict::warning:
    return "warning";
  case lock::Verdict::unsafe:
    return "unsafe";
  }
  return "unsafe";
}

std::string answer_word(const lock::NodeAnswer& answer) {
  switch (answer.kind) {
  case lock::NodeAnswer::Kind::granted:
    return "granted";
  case lock::NodeAnswer::Kind::busy:
    return "busy";
  case lock::NodeAnswer::Kind::unreachable:
    break;
  }
  return "unreachable: " + answer.detail;
}

std::string layout_phrase(lock::Layout layout, std::string_view other_word, bool hint) {
  auto with = [&](std::string_view what, std::string_view redisson, std::string_view take) {
    return hint ? fmt::format("{} ({}; take it with {})", what, redisson, take)
                : fmt::format("{} ({})", what, redisson);
  };
  switch (layout) {
  case lock::Layout::read:
    return with("a read-write lock held for reading", "Redisson RReadWriteLock", "-s");
  case lock::Layout::write:
    return with("a read-write lock held for writing", "Redisson RReadWriteLock", "--write");
  case lock::Layout::semaphore:
    return with("a semaphore", "Redisson RPermitExpirableSemaphore", "--limit N");
  case lock::Layout::exclusive:
  case lock::Layout::fair:
    return with("a plain lock", "Redisson RLock or RFairLock", "no mode flag, or --fair");
  case lock::Layout::none:
  case lock::Layout::other:
    break;
  }
  return fmt::format("a lock of another kind ({})", printable(layout_word(layout, other_word)));
}

namespace {

// Whether `asked` uses the layout family a lock is held in (the plain lock's
// hash, the read-write lock's, the semaphore's): then a busy lock is just busy,
// and saying "take it with ..." would point to the wrong door (issue 30: an
// `acquire -s` was told to take a writer's lock with --write).
bool same_family(lock::Mode asked, lock::Layout layout) {
  switch (asked) {
  case lock::Mode::exclusive:
  case lock::Mode::fair:
    return layout == lock::Layout::exclusive || layout == lock::Layout::fair;
  case lock::Mode::read:
  case lock::Mode::write:
    return layout == lock::Layout::read || layout == lock::Layout::write;
  case lock::Mode::limit:
    return layout == lock::Layout::semaphore;
  }
  return false;
}

} // namespace

std::string holder_phrase(const lock::Holder& holder, lock::Mode asked) {
  if (every_permit_taken(holder, asked)) {
    std::string who = holder.owner.empty() ? std::string() : " by " + printable(holder.owner);
    if (holder.record) {
      who += record_phrase(*holder.record);
    }
    return fmt::format("every permit is taken; the next lease to end is held{}, {}", who, ttl_phrase(holder.ttl));
  }
  if (holder.writer_waiting && holder.layout == lock::Layout::write) {
    // Free: only a waiting writer's intent keeps new readers out.
    std::string who = holder.owner.empty() ? std::string() : " (" + printable(holder.owner) + ")";
    return fmt::format("a writer is waiting for it{}: new readers wait behind it (its intent lapses in {} unless "
                       "it keeps waiting)",
                       who, format_duration(holder.ttl));
  }
  if (holder.layout == lock::Layout::semaphore) {
    // A plain acquire found a --limit semaphore (acquire.lua says so).
    return "it is a semaphore held with --limit (Redisson RPermitExpirableSemaphore): take a permit with "
           "--limit N";
  }
  if (holder.queue_turn) {
    std::string who = holder.owner.empty() ? std::string("an unknown waiter") : printable(holder.owner);
    if (holder.record && (holder.record->host || holder.record->pid)) {
      who += record_phrase(*holder.record);
    }
    return fmt::format("free, but fair waiters are queued: it is the turn of {}", who);
  }
  if (holder.layout != lock::Layout::none) {
    std::string who = holder.owner.empty() ? std::string("") : " by " + printable(holder.owner);
    if (holder.record) {
      who += record_phrase(*holder.record);
    }
    return fmt::format("held as {}{}, {}", layout_phrase(holder.layout, "?", !same_family(asked, holder.layout)), who,
                       ttl_phrase(holder.ttl));
  }
  if (holder.type != lock::KeyType::hash && holder.type != lock::KeyType::none) {
    return fmt::format("held by a foreign {} key (not an rlock/Redisson lock{}), {}", lock::key_type_name(holder.type),
                       holder.type == lock::KeyType::string ? ", or a --limit semaphore" : "", ttl_phrase(holder.ttl));
  }
  std::string who = holder.owner.empty() ? std::string("an unknown owner") : printable(holder.owner);
  if (holder.record) {
    who += record_phrase(*holder.record);
  }
  if (holder.writer_waiting) {
    // Readers hold it, and new readers are kept out by a waiting writer, not by them.
    return fmt::format("a writer is waiting: new readers wait behind it (readers hold it now: {}, {})", who,
                       ttl_phrase(holder.ttl));
  }
  return fmt::format("held by {}, {}", who, ttl_phrase(holder.ttl));
}

namespace {

std::string single_status_line(const lock::LockState& state);

// How many masters hold the lock for the majority's owner (or at all).
int holders_of(const lock::LockState& state) {
  int count = 0;
  for (const auto& view : state.nodes) {
    if (view.state && view.state->held() &&
        (!state.held() || (!view.state->owners.empty() && !state.owners.empty() &&
                           view.state->owners.front().first == state.owners.front().first))) {
      ++count;
    }
  }
  return count;
}

} // namespace

std::string masters_summary(const lock::LockState& state) {
  return fmt::format("{} on {} of {} masters", state.held() ? "held" : "not held by a majority", holders_of(state),
                     state.nodes.size());
}

std::vector<std::string> node_lines(const lock::LockState& state) {
  std::vector<std::string> lines;
  for (const auto& view : state.nodes) {
    std::string line = view.state ? single_status_line(*view.state) : "unreachable: " + view.error;
    if (view.state) {
      line = line.substr(std::min(line.size(), printable(state.name).size() + 2)); // without "NAME: "
    }
    lines.push_back(fmt::format("  {}: {}", view.url, line));
  }
  return lines;
}

std::string status_line(const lock::LockState& state) {
  if (state.nodes.empty()) {
    return single_status_line(state);
  }
  std::string out = fmt::format("{} [{}]", single_status_line(state), masters_summary(state));
  for (const auto& line : node_lines(state)) {
    out += "\n" + line;
  }
  return out;
}

nlohmann::json nodes_json(const std::vector<lock::NodeAnswer>& answers) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& answer : answers) {
    nodes.push_back({{"url", answer.url},
                     {"granted", answer.kind == lock::NodeAnswer::Kind::granted},
                     {"answer", answer_word(answer)}});
  }
  return nodes;
}

namespace {

// ", host h, pid 1, since T, cmd "c"": what a record says, or nothing.
std::string record_details(const lock::HolderRecord& record) {
  std::string out;
  if (record.fence) {
    out += fmt::format(", fence {}", *record.fence);
  }
  if (record.host) {
    out += fmt::format(", host {}", printable(*record.host));
  }
  if (record.pid) {
    out += fmt::format(", pid {}", *record.pid);
  }
  if (record.acquired_at_ms) {
    out += fmt::format(", since {}", utc_time(*record.acquired_at_ms));
  }
  if (record.renewed_at_ms) {
    out += fmt::format(", renewed {}", utc_time(*record.renewed_at_ms));
  }
  if (record.command) {
    out += fmt::format(", cmd {}", quote(*record.command));
  }
  return out;
}

// The holders of a shared layout (readers, permits), each with its own lease.
std::string holders_phrase(const lock::LockState& state) {
  std::string out;
  for (const auto& holder : state.holders) {
    out += fmt::format("{} {} ({}{}{})", out.empty() ? "" : ";", printable(holder.owner),
                       holder.count > 1 ? fmt::format("count {}, ", holder.count) : std::string(),
                       ttl_phrase(holder.ttl), holder.record ? record_details(*holder.record) : std::string());
  }
  return out;
}

// "; 2 waiting: a (for 3s), b" for a fair queue.
std::string waiters_phrase(const lock::LockState& state) {
  if (state.waiters.empty()) {
    return "";
  }
  std::string out = fmt::format("; {} waiting in order:", state.waiters.size());
  for (std::size_t i = 0; i < state.waiters.size(); ++i) {
    const auto& waiter = state.waiters[i];
    out += fmt::format("{} {}", i ? "," : "", printable(waiter.owner));
    std::string details;
    if (waiter.waited) {
      details = "for " + format_duration(*waiter.waited);
    }
    if (waiter.record && waiter.record->host) {
      details += (details.empty() ? "" : ", ") + ("host " + printable(*waiter.record->host));
    }
    if (waiter.record && waiter.record->pid) {
      details += (details.empty() ? "" : ", ") + fmt::format("pid {}", *waiter.record->pid);
    }
    if (!details.empty()) {
      out += " (" + details + ")";
    }
  }
  return out;
}

} // namespace

std::string lock_kind(const lock::LockState& state) {
  if (state.layout == lock::Layout::semaphore) {
    return "semaphore";
  }
  if (!state.held()) {
    return "";
  }
  if (state.type != lock::KeyType::hash) {
    return "foreign";
  }
  if (state.layout == lock::Layout::read || state.layout == lock::Layout::write) {
    return "read-write";
  }
  if (state.layout == lock::Layout::fair) {
    return "fair";
  }
  return state.record ? "rlock" : "redisson";
}

namespace {

std::string single_status_line(const lock::LockState& state) {
  std::string name = printable(state.name);
  if (state.layout == lock::Layout::semaphore) {
    std::string free = state.permits_free ? fmt::format(", {} free", *state.permits_free) : std::string();
    if (state.holders.empty()) {
      return fmt::format("{}: semaphore, no permit held{}", name, free);
    }
    return fmt::format("{}: semaphore, {} permit{} held{}:{}", name, state.holders.size(),
                       state.holders.size() == 1 ? "" : "s", free, holders_phrase(state));
  }
  if (!state.held()) {
    return fmt::format("{}: free", name);
  }
  if ((state.layout == lock::Layout::read || state.layout == lock::Layout::write) && state.complete) {
    std::string out = fmt::format("{}: read-write lock held for {}", name,
                                  state.layout == lock::Layout::read ? "reading" : "writing");
    for (const auto& [owner, count] : state.owners) {
      if (owner.ends_with(":write")) {
        out += fmt::format(" by writer {} (count {})", printable(owner), count);
      }
    }
    out += fmt::format(", {}", ttl_phrase(state.ttl));
    if (state.record && state.record->readable()) {
      out += record_details(*state.record);
    }
    if (!state.holders.empty()) {
      std::size_t readers = std::count_if(state.holders.begin(), state.holders.end(),
                                          [](const auto& h) { return !h.owner.ends_with(":write"); });
      out += fmt::format("; {} reader{}:{}", readers, readers == 1 ? "" : "s", holders_phrase(state));
    }
    return out + waiters_phrase(state);
  }
  if (state.type != lock::KeyType::hash) {
    return fmt::format("{}: held by a foreign {} key, {}", name, lock::key_type_name(state.type),
                       ttl_phrase(state.ttl));
  }
  if (!state.complete) {
    return fmt::format("{}: a hash too big to be a lock (not read), {}", name, ttl_phrase(state.ttl));
  }
  std::string out = fmt::format("{}: {}held", name, state.layout == lock::Layout::fair ? "fair lock " : "");
  for (const auto& [owner, count] : state.owners) {
    out += fmt::format(" by {} (count {})", printable(owner), count);
  }
  out += fmt::format(", {}", ttl_phrase(state.ttl));
  if (!state.record) {
    return out + ", no rlock record (a Redisson client's)" + waiters_phrase(state);
  }
  const auto& record = *state.record;
  if (!record.readable()) {
    return out + ", holder unknown (unreadable rlock:meta)" + waiters_phrase(state);
  }
  return out + record_details(record) + waiters_phrase(state);
}

} // namespace

nlohmann::json holder_json(const std::optional<lock::HolderRecord>& record) {
  if (!record) {
    return nullptr;
  }
  return {{"host", or_null(record->host)},
          {"pid", or_null(record->pid)},
          {"command", or_null(record->command)},
          {"acquired_at_ms", or_null(record->acquired_at_ms)},
          {"acquired_at", record->acquired_at_ms ? nlohmann::json(utc_time(*record->acquired_at_ms))
                                                 : nlohmann::json(nullptr)},
          {"ttl_ms", or_null(record->ttl_ms)},
          {"version", or_null(record->version)},
          {"renewed_at_ms", or_null(record->renewed_at_ms)},
          {"renewed_at", record->renewed_at_ms ? nlohmann::json(utc_time(*record->renewed_at_ms))
                                               : nlohmann::json(nullptr)},
          {"boot_id", or_null(record->boot_id)},
          {"start_ticks", or_null(record->start_ticks)}};
}

std::string done_phrase(const lock::DoneRecord& record) {
  std::string by;
  if (record.host) {
    by += " host " + printable(*record.host);
  }
  if (record.pid) {
    by += fmt::format(" pid {}", *record.pid);
  }
  if (record.command) {
    by += " (" + quote(*record.command) + ")";
  }
  std::string out = by.empty()
                        ? std::string(record.readable() ? "by an unnamed holder" : "by an unreadable record")
                        : "by" + by;
  if (record.done_at_ms) {
    out += " at " + utc_time(*record.done_at_ms);
  }
  if (record.exit) {
    out += fmt::format(", exit {}", *record.exit);
  }
  return out;
}

std::string last_done_line(const lock::LockState& state) {
  if (!state.last_done) {
    return "";
  }
  const auto& record = *state.last_done;
  std::string window;
  if (record.window_start_ms && record.window_end_ms) {
    window =
        fmt::format(" (window {} .. {})", utc_time(*record.window_start_ms), utc_time(*record.window_end_ms));
  }
  return fmt::format("  last done: {}{}{}", done_phrase(record), window,
                     record.ttl_ms >= 0
                         ? fmt::format(", record expires in {}", format_duration(Millis(record.ttl_ms)))
                         : std::string());
}

nlohmann::json last_done_json(const lock::LockState& state) {
  if (!state.last_done) {
    return nullptr;
  }
  const auto& record = *state.last_done;
  auto time = [](const std::optional<long long>& ms) {
    return ms ? nlohmann::json(utc_time(*ms)) : nlohmann::json(nullptr);
  };
  return {{"window_start", time(record.window_start_ms)},
          {"window_end", time(record.window_end_ms)},
          {"window_start_ms", or_null(record.window_start_ms)},
          {"window_end_ms", or_null(record.window_end_ms)},
          {"host", or_null(record.host)},
          {"pid", or_null(record.pid)},
          {"cmd", or_null(record.command)},
          {"at", time(record.done_at_ms)},
          {"at_ms", or_null(record.done_at_ms)},
          {"exit", or_null(record.exit)},
          {"readable", record.readable()},
          {"expires_in_ms", record.ttl_ms >= 0 ? nlohmann::json(record.ttl_ms) : nlohmann::json(nullptr)}};
}

nlohmann::json status_json(const lock::LockState& state) {
  nlohmann::json owners = nlohmann::json::array();
  for (const auto& [owner, count] : state.owners) {
    owners.push_back({{"owner", owner}, {"count", count}});
  }
  nlohmann::json out = {
      {"name", state.name},
      {"held", state.held()},
      {"kind", state.held() || state.layout == lock::Layout::semaphore ? nlohmann::json(lock_kind(state))
                                                                        : nlohmann::json(nullptr)},
      {"type", state.held() ? nlohmann::json(lock::key_type_name(state.type)) : nlohmann::json(nullptr)},
      {"foreign", state.held() && state.type != lock::KeyType::hash && state.layout != lock::Layout::semaphore},
      {"ttl_ms", state.held() ? nlohmann::json(state.ttl.count()) : nlohmann::json(nullptr)},
      {"owners", owners},
      {"owner", state.owners.empty() ? nlohmann::json(nullptr) : nlohmann::json(state.owners.front().first)},
      {"count", state.owners.empty() ? 0 : state.owners.front().second},
      {"fence", state.record ? or_null(state.record->fence) : nlohmann::json(nullptr)},
      {"holder", holder_json(state.record)},
      {"mode", mode_word(state).empty() ? nlohmann::json(nullptr) : nlohmann::json(mode_word(state))},
      {"server_time_ms", or_null(state.server_now_ms)},
  };
  if (!state.holders.empty() || state.layout == lock::Layout::read || state.layout == lock::Layout::write ||
      state.layout == lock::Layout::semaphore) {
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& holder : state.holders) {
      holders.push_back({{"owner", holder.owner},
                         {"count", holder.count},
                         {"ttl_ms", holder.ttl.count()},
                         {"holder", holder_json(holder.record)}});
    }
    out["holders"] = holders;
  }
  if (state.permits_free) {
    out["permits_free"] = *state.permits_free;
  }
  nlohmann::json waiters = nlohmann::json::array();
  for (const auto& waiter : state.waiters) {
    waiters.push_back({{"owner", waiter.owner},
                       {"waited_ms", waiter.waited ? nlohmann::json(waiter.waited->count()) : nlohmann::json(nullptr)},
                       {"gives_up_in_ms",
                        waiter.gives_up_in ? nlohmann::json(waiter.gives_up_in->count()) : nlohmann::json(nullptr)},
                       {"holder", holder_json(waiter.record)}});
  }
  out["waiters"] = waiters;
  out["last_done"] = last_done_json(state);
  if (!state.nodes.empty()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& view : state.nodes) {
      nlohmann::json node = view.state ? status_json(*view.state) : nlohmann::json::object();
      node.erase("name");
      node["url"] = view.url;
      node["reachable"] = view.state != nullptr;
      if (!view.state) {
        node["error"] = view.error;
      }
      nodes.push_back(node);
    }
    out["nodes"] = nodes;
    out["masters_holding"] = holders_of(state);
  }
  return out;
}

std::string doctor_text(const std::vector<lock::Finding>& findings) {
  std::string out;
  int unsafe = 0;
  int warnings = 0;
  for (const auto& finding : findings) {
    unsafe += finding.verdict == lock::Verdict::unsafe ? 1 : 0;
    warnings += finding.verdict == lock::Verdict::warning ? 1 : 0;
    out += fmt::format("{:<7} {} {}: {}: {}\n", verdict_word(finding.verdict), finding.server, finding.check,
                       finding.setting, finding.why);
  }
  out += unsafe > 0 ? fmt::format("{} unsafe, {} warning(s): locks on this deployment are not safe\n", unsafe,
                                  warnings)
                    : fmt::format("nothing unsafe ({} warning(s))\n", warnings);
  return out;
}

nlohmann::json servers_json(const std::vector<redis::Client::ServerName>& servers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& server : servers) {
    out.push_back({{"server", server.server}, {"name", server.name}, {"version", server.version}});
  }
  return out;
}

nlohmann::json finding_json(const lock::Finding& finding) {
  return {{"server", finding.server},
          {"check", finding.check},
          {"setting", finding.setting},
          {"verdict", verdict_word(finding.verdict)},
          {"why", finding.why}};
}

} // namespace rlock::cli
