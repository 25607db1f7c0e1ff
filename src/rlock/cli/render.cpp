#include <rlock/cli/render.hpp>
#include <rlock/core/text.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

namespace rlock::cli {

namespace {

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

std::string who(std::string_view owner, const MetaView& meta) {
  std::string out = owner.empty() ? std::string("an unknown owner") : printable(owner);
  if (meta.present) {
    out += fmt::format(" on {} (pid {}, {})", printable(meta.host), meta.pid, quote(meta.command));
  }
  return out;
}

} // namespace

MetaView parse_meta(std::string_view raw) {
  MetaView meta;
  if (raw.empty()) {
    return meta;
  }
  auto doc = nlohmann::json::parse(raw, nullptr, false);
  if (!doc.is_object()) {
    return meta;
  }
  meta.present = true;
  meta.host = doc.value("host", "");
  meta.pid = doc.value("pid", 0LL);
  meta.command = doc.value("command", "");
  meta.acquired_at_ms = doc.value("acquired_at_ms", 0LL);
  meta.ttl_ms = doc.value("ttl_ms", 0LL);
  meta.fence = doc.value("fence", 0LL);
  meta.version = doc.value("version", "");
  return meta;
}

std::string holder_phrase(const lock::Holder& holder) {
  if (holder.type != "hash" && !holder.type.empty()) {
    return fmt::format("held by a foreign {} key (not an rlock/Redisson lock), {}", holder.type,
                       ttl_phrase(holder.ttl));
  }
  return fmt::format("held by {}, {}", who(holder.owner, parse_meta(holder.meta)), ttl_phrase(holder.ttl));
}

std::string status_line(const lock::LockState& state) {
  std::string name = printable(state.name);
  if (!state.held()) {
    return fmt::format("{}: free", name);
  }
  if (state.type != "hash") {
    return fmt::format("{}: held by a foreign {} key, {}", name, state.type, ttl_phrase(state.ttl));
  }
  MetaView meta = parse_meta(state.meta);
  std::string out = fmt::format("{}: held", name);
  for (const auto& [owner, count] : state.owners) {
    out += fmt::format(" by {} (count {})", printable(owner), count);
  }
  out += fmt::format(", {}", ttl_phrase(state.ttl));
  if (meta.present) {
    out += fmt::format(", fence {}, host {}, pid {}, since {}, cmd {}", meta.fence, printable(meta.host),
                       meta.pid, utc_time(meta.acquired_at_ms), quote(meta.command));
  }
  return out;
}

nlohmann::json meta_json(const MetaView& meta) {
  if (!meta.present) {
    return nullptr;
  }
  return {{"host", meta.host},
          {"pid", meta.pid},
          {"command", meta.command},
          {"acquired_at_ms", meta.acquired_at_ms},
          {"acquired_at", utc_time(meta.acquired_at_ms)},
          {"ttl_ms", meta.ttl_ms},
          {"version", meta.version}};
}

nlohmann::json status_json(const lock::LockState& state) {
  MetaView meta = parse_meta(state.meta);
  nlohmann::json owners = nlohmann::json::array();
  for (const auto& [owner, count] : state.owners) {
    owners.push_back({{"owner", owner}, {"count", count}});
  }
  nlohmann::json out = {
      {"name", state.name},
      {"held", state.held()},
      {"type", state.held() ? nlohmann::json(state.type) : nlohmann::json(nullptr)},
      {"foreign", state.held() && state.type != "hash"},
      {"ttl_ms", state.held() ? nlohmann::json(state.ttl.count()) : nlohmann::json(nullptr)},
      {"owners", owners},
      {"owner", state.owners.empty() ? nlohmann::json(nullptr) : nlohmann::json(state.owners.front().first)},
      {"count", state.owners.empty() ? 0 : state.owners.front().second},
      {"fence", meta.present ? nlohmann::json(meta.fence) : nlohmann::json(nullptr)},
      {"holder", meta_json(meta)},
  };
  return out;
}

} // namespace rlock::cli
