#pragma once

// An in-memory lock::Store for unit tests (as ninja tests its builder on a
// virtual file system): the plain lock's operations with the scripts'
// semantics in C++ (owner-checked release and renewal, re-entry counts,
// force-unlock only of the hold that was judged, the once-per record), on a
// made-up server clock. No waiting: a busy lock answers busy at once. Each
// operation can be made to fail with a RedisError of a chosen kind.

#include <rlock/lock/store.hpp>
#include <rlock/redis/errors.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlock::test {

class MemoryStore final : public lock::Store {
public:
  struct Hold {
    std::string owner;
    long long count = 1;
    Millis lease{30'000};
    std::optional<lock::HolderRecord> record;
    std::string record_raw;
  };
  std::map<std::string, Hold> holds;             // by lock name
  std::map<std::string, lock::DoneRecord> done;  // rlock_done:{NAME}, by lock name
  std::optional<long long> now_ms = 1'795'478'400'000; // the server's clock (nullopt: not in answers)
  // Operations that fail: "acquire", "release", "renew", "inspect", "force_unlock_if", or
  // "renew NAME" / "release NAME" for one lock only.
  std::map<std::string, RedisErrorKind> failing;
  std::vector<std::string> calls; // "acquire A", "release A", ... in order
  long long fence = 0;

  std::unique_ptr<lock::Store> fresh(std::optional<Millis>) const override {
    throw std::logic_error("MemoryStore::fresh");
  }

  // The hold of `keys` if `owner` holds it; else end(), with the owner check
  // in `result` (missing, or another owner's, named in `detail`).
  template <typename Result>
  std::map<std::string, Hold>::iterator owned(const lock::LockKeys& keys, const std::string& owner, Result& result) {
    auto it = holds.find(keys.name);
    if (it == holds.end()) {
      result.check = lock::OwnerCheck::missing;
    } else if (it->second.owner != owner) {
      result.check = lock::OwnerCheck::other;
      result.detail = it->second.owner;
      return holds.end();
    }
    return it;
  }

  lock::AcquireResult acquire(const lock::AcquireRequest& request, SignalFd*, const lock::BusyCallback&,
                              const lock::KeepAlive&) override {
    const auto& name = request.keys.name;
    note("acquire", name);
    lock::AcquireResult result;
    auto it = holds.find(name);
    if (it != holds.end() && it->second.owner != request.owner) {
      result.holder.owner = it->second.owner;
      result.holder.type = lock::KeyType::hash;
      result.holder.ttl = it->second.lease;
      result.holder.record = it->second.record;
      return result;
    }
    if (it == holds.end()) {
      it = holds.emplace(name, Hold{request.owner, 0, request.lease, std::nullopt, {}}).first;
      ++fence;
    } else {
      result.reentered = true;
    }
    ++it->second.count;
    it->second.lease = request.lease;
    result.acquired = true;
    result.count = it->second.count;
    result.fence = fence;
    result.lease = request.lease;
    return result;
  }

  lock::ReleaseResult release(const lock::LockKeys& keys, lock::Mode, const std::string& owner, bool all,
                              redis::RetryPolicy::Mode) override {
    note("release", keys.name);
    lock::ReleaseResult result;
    auto it = owned(keys, owner, result);
    if (it != holds.end()) {
      it->second.count = all ? 0 : it->second.count - 1;
      result.remaining = it->second.count;
      if (it->second.count == 0) {
        holds.erase(it);
      }
    }
    return result;
  }

  lock::RenewResult renew(const lock::LockKeys& keys, lock::Mode, const std::string& owner, Millis lease,
                          redis::RetryPolicy::Mode, const redis::SyncReplicas&) override {
    note("renew", keys.name);
    lock::RenewResult result;
    auto it = owned(keys, owner, result);
    if (it != holds.end()) {
      if (lease.count() > 0) {
        it->second.lease = lease;
      }
      result.lease = it->second.lease;
    }
    return result;
  }

  void leave_queue(const lock::LockKeys& keys, lock::Mode, const std::string&) noexcept override {
    note("leave_queue", keys.name);
  }
  std::optional<lock::KeyType> force_unlock(const lock::LockKeys& keys) override {
    note("force_unlock", keys.name);
    if (holds.erase(keys.name) == 0) {
      return std::nullopt;
    }
    return lock::KeyType::hash;
  }

  lock::History history(const lock::LockKeys& keys, int) override {
    note("history", keys.name);
    return {};
  }

  void log_event(const lock::LockKeys& keys, const std::string& kind, const std::string&,
                 const lock::EventFields&) override {
    note("log_event " + kind, keys.name);
  }

  lock::ConditionalRemoval force_unlock_if(const lock::LockKeys& keys, const lock::ExpectedHold& expected) override {
    note("force_unlock_if", keys.name);
    auto it = holds.find(keys.name);
    if (it == holds.end()) {
      return lock::ConditionalRemoval::gone;
    }
    if (it->second.owner != expected.owner || it->second.record_raw != expected.record_raw) {
      return lock::ConditionalRemoval::changed;
    }
    holds.erase(it);
    return lock::ConditionalRemoval::removed;
  }

  lock::DoneResult record_done(const lock::LockKeys& keys, const std::string& owner, Millis length,
                               const lock::HolderInfo& info, int exit_status) override {
    note("record_done", keys.name);
    lock::DoneResult result;
    auto it = holds.find(keys.name);
    if (it == holds.end() || it->second.owner != owner) {
      result.check = it == holds.end() ? lock::OwnerCheck::missing : lock::OwnerCheck::other;
      return result;
    }
    const long long now = now_ms.value_or(0);
    result.window = lock::window_of(now, length.count());
    result.done_at_ms = now;
    lock::DoneRecord record;
    record.window_start_ms = result.window.start_ms;
    record.window_end_ms = result.window.end_ms;
    record.host = info.host;
    record.pid = info.pid;
    record.done_at_ms = now;
    record.exit = exit_status;
    record.ttl_ms = result.window.end_ms - now;
    done[keys.name] = record;
    return result;
  }

  std::vector<lock::LockState> inspect(const std::vector<std::string>& names) override {
    std::vector<lock::LockState> out;
    for (const auto& name : names) {
      note("inspect", name);
      lock::LockState state;
      state.name = name;
      state.type = lock::KeyType::none;
      state.server_now_ms = now_ms;
      if (auto it = holds.find(name); it != holds.end()) {
        state.type = lock::KeyType::hash;
        state.ttl = it->second.lease;
        state.owners = {{it->second.owner, it->second.count}};
        state.record = it->second.record;
        state.record_raw = it->second.record_raw;
      }
      if (auto it = done.find(name); it != done.end()) {
        state.last_done = it->second;
      }
      out.push_back(std::move(state));
    }
    return out;
  }

  std::vector<lock::LockState> find_locks(const std::string&) override {
    std::vector<std::string> names;
    for (const auto& [name, hold] : holds) {
      names.push_back(name);
    }
    return inspect(names);
  }
  std::vector<lock::ServerFacts> survey() override { return {}; }
  void refresh() override {}
  std::string describe() const override { return "memory"; }
  std::vector<redis::Client::ServerName> server_names() const override { return {}; }

private:
  // Notes the call; throws the RedisError it is set to fail with.
  void note(const std::string& op, const std::string& name) {
    calls.push_back(op + " " + name);
    for (const auto& key : {op, op + " " + name}) {
      if (auto it = failing.find(key); it != failing.end()) {
        throw RedisError(it->second, "made to fail: " + key);
      }
    }
  }
};

} // namespace rlock::test
