#pragma once

#include <rlock/lock/lock.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace rlock::cli {

// The holder record rlock keeps in 'rlock:meta', as far as it could be read.
struct MetaView {
  bool present = false;
  std::string host;
  long long pid = 0;
  std::string command;
  long long acquired_at_ms = 0; // server time, ms since the epoch
  long long ttl_ms = 0;
  long long fence = 0;
  std::string version;
};

// Parses the 'rlock:meta' JSON; present=false when empty or unreadable.
MetaView parse_meta(std::string_view raw);

// "TOKEN on host (pid 12, "cmd"), 12.3s left" for messages about a busy lock.
std::string holder_phrase(const lock::Holder& holder);

// One line of `status` output for people.
std::string status_line(const lock::LockState& state);

// The JSON object of one lock in `status --json` (fields documented in README).
nlohmann::json status_json(const lock::LockState& state);

// The JSON object of a holder record (null when absent).
nlohmann::json meta_json(const MetaView& meta);

} // namespace rlock::cli
