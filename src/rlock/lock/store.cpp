// One deployment as a lock::Store (a redis::Client), and make_store, which
// builds it or a Redlock quorum from the endpoints.

#include <rlock/core/errors.hpp>
#include <rlock/lock/redlock.hpp>
#include <rlock/lock/store.hpp>

#include <fmt/format.h>

namespace rlock::lock {

namespace {

// One deployment behind one redis::Client.
class SingleStore final : public Store {
public:
  explicit SingleStore(redis::Client client) : m_client(std::move(client)) {}

  std::unique_ptr<Store> fresh(std::optional<Millis> cap) const override {
    return std::make_unique<SingleStore>(m_client.fresh(cap));
  }
  AcquireResult acquire(const AcquireRequest& request, SignalFd* signals, const BusyCallback& on_busy,
                        const KeepAlive& keep_alive) override {
    return lock::acquire(m_client, request, signals, on_busy, keep_alive);
  }
  ReleaseResult release(const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                        redis::RetryPolicy::Mode retry) override {
    return lock::release(m_client, keys, mode, owner, all, new_op_id(), {}, retry);
  }
  RenewResult renew(const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                    redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) override {
    return lock::renew(m_client, keys, mode, owner, lease, retry, sync);
  }
  void leave_queue(const LockKeys& keys, Mode mode, const std::string& owner) noexcept override {
    lock::leave_queue(m_client, keys, mode, owner);
  }
  std::optional<KeyType> force_unlock(const LockKeys& keys) override {
    return lock::force_unlock(m_client, keys);
  }
  ConditionalRemoval force_unlock_if(const LockKeys& keys, const ExpectedHold& expected) override {
    return lock::force_unlock_if(m_client, keys, expected);
  }
  DoneResult record_done(const LockKeys& keys, const std::string& owner, Millis length,
                         const HolderInfo& info, int exit_status) override {
    return lock::record_done(m_client, keys, owner, length, info, exit_status);
  }
  std::vector<LockState> inspect(const std::vector<std::string>& names) override {
    return lock::inspect(m_client, names);
  }
  std::vector<LockState> find_locks(const std::string& pattern) override {
    return lock::find_locks(m_client, pattern);
  }
  History history(const LockKeys& keys, int limit) override { return read_history(m_client, keys, limit); }
  void log_event(const LockKeys& keys, const std::string& kind, const std::string& owner,
                 const EventFields& extras) override {
    log_client_event(m_client, keys, kind, owner, extras);
  }
  void refresh() override { m_client.refresh(); }
  std::string describe() const override { return m_client.describe(); }
  std::vector<redis::Client::ServerName> server_names() const override { return m_client.server_names(); }

  std::vector<ServerFacts> survey() override {
    const auto& target = m_client.target();
    auto primaries = m_client.primaries();
    std::string topology = m_client.is_cluster()  ? fmt::format("cluster ({} primaries)", primaries.size())
                           : target.is_sentinel() ? fmt::format("sentinel (primary {})", target.master)
                                                  : std::string("standalone");
    std::vector<ServerFacts> out;
    for (const auto& node : primaries) {
      out.push_back(lock::survey(m_client, node, topology));
    }
    return out;
  }

private:
  redis::Client m_client;
};

} // namespace

std::unique_ptr<Store> make_store(const std::vector<redis::Endpoint>& endpoints, redis::Timeouts timeouts) {
  if (endpoints.size() == 1) {
    return std::make_unique<SingleStore>(redis::Client(endpoints.front(), timeouts));
  }
  // One vote per server: URLs that differ in text but resolve to one address
  // (localhost and 127.0.0.1) are one master named twice.
  std::vector<std::vector<std::string>> addresses;
  for (const auto& endpoint : endpoints) {
    addresses.push_back(redis::server_addresses(endpoint));
  }
  if (auto twice = redis::same_server(addresses)) {
    throw Error(
        Outcome::bad_setting, redis::same_server_message(endpoints[twice->first], endpoints[twice->second], twice->address));
  }
  return make_redlock(endpoints, timeouts);
}

} // namespace rlock::lock
