#pragma once

#include <rlock/lock/lock.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace rlock::cli {

// "TOKEN on host (pid 12, "cmd"), 12.3s left" for messages about a busy lock;
// what the holder's record does not say is left out ("holder unknown" when
// nothing in it can be read).
std::string holder_phrase(const lock::Holder& holder);

// One line of `status` output for people.
std::string status_line(const lock::LockState& state);

// The JSON object of one lock in `status --json` (fields documented in README).
nlohmann::json status_json(const lock::LockState& state);

// The JSON object of a holder record: null when there is none (not rlock's),
// each field null when the record does not say it readably.
nlohmann::json holder_json(const std::optional<lock::HolderRecord>& record);

} // namespace rlock::cli
