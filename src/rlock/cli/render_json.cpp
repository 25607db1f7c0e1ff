// Typed lock state as JSON (status --json, acquire --json's nodes, doctor
// --json): the documented fields, each from one typed value.

#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>

namespace rlock::cli {

namespace {

template <class T> nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace

nlohmann::json nodes_json(const std::vector<lock::NodeAnswer>& answers) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& answer : answers) {
    nodes.push_back({{"url", answer.url},
                     {"granted", answer.kind == lock::NodeAnswer::Kind::granted},
                     {"answer", answer_word(answer)}});
  }
  return nodes;
}

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
          {"kept_until_ms", or_null(record->kept_until_ms)},
          {"kept_until", record->kept_until_ms ? nlohmann::json(utc_time(*record->kept_until_ms))
                                               : nlohmann::json(nullptr)},
          {"boot_id", or_null(record->boot_id)},
          {"start_ticks", or_null(record->start_ticks)}};
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
      {"foreign",
       state.held() && state.type != lock::KeyType::hash && state.layout != lock::Layout::semaphore},
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
    waiters.push_back(
        {{"owner", waiter.owner},
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
    out["masters_holding"] = masters_holding(state);
  }
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
