#pragma once

// The verdict on a lock's holder from its record (force-unlock --if-dead,
// check --dead-holder), pure over a probe of this host's processes.

#include <rlock/core/proc.hpp>
#include <rlock/lock/lock.hpp>

#include <functional>
#include <optional>
#include <string>

namespace rlock::lock {

// This machine, as a holder record names it.
struct ThisHost {
  std::string host;
  std::string boot_id; // "" when it cannot be read
};

// What `force-unlock --if-dead` concludes about a held lock.
struct HolderVerdict {
  bool gone = false;  // true: its recorded holder process is provably gone
  bool alive = false; // true: the very process that took it still runs
  std::string why;    // the reason, for people ("pid 42 is gone", "alive: ...")
};

// Looks a process up on this host (process_start in production).
using ProcessProbe = std::function<std::optional<ProcessStart>(long long pid)>;

// Whether the holder of a held lock (`state`, as inspect read it) is provably
// gone: one holder (an exclusive or fair lock hash), rlock's record of it
// naming this host (same host name and, when recorded, same boot id) and a
// pid that is absent, finished, or now a process with another start time.
// Anything else is not proof: a live pid (with the same start time, or none
// recorded), another host or boot, no or an unreadable record, several
// holders (read-write, semaphore) or a foreign key. Nor is a gone process
// proof when the record notes a renewal within its last lease (renewed_at_ms
// less than ttl_ms, else 30s, before state.server_now_ms): something still
// renews the lock (a `run` that re-entered another process's token).
// Pure: `probe` is the only look at the system.
HolderVerdict judge_holder(const LockState& state, const ThisHost& here, const ProcessProbe& probe);

} // namespace rlock::lock
