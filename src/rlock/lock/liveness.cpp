// Whether a lock's recorded holder is provably gone (this host and boot, its
// pid absent or another process, no renewal within its lease): pure.

#include <rlock/lock/liveness.hpp>

#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/core/text.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace rlock::lock {

namespace {

HolderVerdict alive(std::string why) {
  return HolderVerdict{false, false, std::move(why)};
}

HolderVerdict judge_process(const LockState& state, const ThisHost& here, const ProcessProbe& probe);

// A renewal noted in the record within its last lease (the longer of the
// record's ttl_ms, else k_default_lease) is proof of life: something renews the lock,
// whatever process the record names (issue 19: a `run` re-entering a plain
// acquire's token). The reason, or "" when there is none.
std::string renewed_lately(const LockState& state) {
  if (!state.record || !state.record->renewed_at_ms || !state.server_now_ms) {
    return {};
  }
  const long long lease = state.record->ttl_ms.value_or(k_default_lease.count());
  const long long age = *state.server_now_ms - *state.record->renewed_at_ms;
  if (age >= lease) {
    return {};
  }
  return fmt::format("renewed {} ago, within its lease of {}: something still renews it",
                     format_duration(Millis(std::max(age, 0LL))), format_duration(Millis(lease)));
}

} // namespace

HolderVerdict judge_holder(const LockState& state, const ThisHost& here, const ProcessProbe& probe) {
  auto verdict = judge_process(state, here, probe);
  if (verdict.gone) {
    if (auto why = renewed_lately(state); !why.empty()) {
      return alive(fmt::format("alive: {} (though {})", why, verdict.why));
    }
  }
  return verdict;
}

namespace {

HolderVerdict judge_process(const LockState& state, const ThisHost& here, const ProcessProbe& probe) {
  if (state.type != KeyType::hash || state.layout == Layout::semaphore) {
    return alive(state.layout == Layout::semaphore
                     ? "a semaphore has one holder per permit, not one holder to check"
                     : fmt::format("not a lock hash (a {} key): no holder record", key_type_name(state.type)));
  }
  if (state.layout == Layout::read || state.layout == Layout::write) {
    return alive(fmt::format("a read-write lock ({} mode) is not checked: only exclusive and fair locks are",
                             state.layout == Layout::read ? "read" : "write"));
  }
  if (state.owners.size() != 1) {
    return alive(fmt::format("{} owners in the hash: no single holder to check", state.owners.size()));
  }
  if (!state.record) {
    return alive("no holder record (taken by another client, e.g. Redisson): nothing tells who holds it");
  }
  const auto& record = *state.record;
  if (!record.readable()) {
    return alive("unreadable holder record");
  }
  if (!record.host || record.host->empty()) {
    return alive("the holder record names no host");
  }
  if (*record.host != here.host) {
    return alive(fmt::format("held from another host ({}): its processes cannot be seen from here",
                             printable(*record.host)));
  }
  if (record.boot_id) {
    if (here.boot_id.empty()) {
      return alive("this host's boot id cannot be read to compare with the record's");
    }
    if (*record.boot_id != here.boot_id) {
      return alive(fmt::format("taken during another boot of a host named {} (boot id {}, now {}): "
                               "cannot tell that it is this machine",
                               printable(*record.host), printable(*record.boot_id), here.boot_id));
    }
  }
  if (!record.pid) {
    return alive("the holder record names no pid");
  }
  const long long pid = *record.pid;
  auto process = probe(pid);
  if (!process) {
    return HolderVerdict{true, false, fmt::format("pid {} is gone", pid)};
  }
  if (process->finished()) {
    return HolderVerdict{true, false, fmt::format("pid {} has exited (not yet reaped)", pid)};
  }
  if (!record.start_ticks) {
    return alive(
        fmt::format("pid {} is running, and the record has no start time to tell a reused pid apart", pid));
  }
  if (process->start_ticks != *record.start_ticks) {
    return HolderVerdict{true, false,
                         fmt::format("pid {} is another process now (started at tick {}, the holder at {})",
                                     pid, process->start_ticks, *record.start_ticks)};
  }
  return HolderVerdict{
      false, true,
      fmt::format("alive: pid {} ({}) still runs", pid,
                  record.command ? printable(*record.command) : std::string("command unknown"))};
}

} // namespace

} // namespace rlock::lock
