// Typed lock state in words for people: layouts, holders, status lines,
// once-per records, doctor's findings (the one place words are made of it).

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

std::string ttl_phrase(Millis ttl) {
  if (ttl.count() == -1) {
    return "no expiry";
  }
  if (ttl.count() < 0) {
    return "expiring";
  }
  return format_duration(ttl) + " left";
}

namespace {

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



} // namespace rlock::cli
