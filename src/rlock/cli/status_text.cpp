// `status` for people: one line per lock (and, for a Redlock, one per
// master), what kind of lock it is, its holders, waiters and last completion.

#include <rlock/cli/render.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace rlock::cli {

namespace {

std::string single_status_line(const lock::LockState& state);

} // namespace

int masters_holding(const lock::LockState& state) {
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

std::string masters_summary(const lock::LockState& state) {
  return fmt::format("{} on {} of {} masters", state.held() ? "held" : "not held by a majority",
                     masters_holding(state), state.nodes.size());
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
  if (record.kept_until_ms) {
    out += fmt::format(", kept by --hold-min until {} (CMD ended)", utc_time(*record.kept_until_ms));
  } else if (record.renewed_at_ms) {
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
    out +=
        fmt::format("{} {} ({}{}{})", out.empty() ? "" : ";", printable(holder.owner),
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

} // namespace rlock::cli
