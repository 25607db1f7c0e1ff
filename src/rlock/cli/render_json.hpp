#pragma once

// Typed lock state as JSON: the documented fields of status --json, acquire
// --json's nodes, the holder record, doctor --json.

#include <rlock/lock/doctor.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/client.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace rlock::cli {

// The JSON object of one lock in `status --json` (fields documented in man/rlock.1, JSON OUTPUT;
// Redlock adds "nodes", each master's view).
nlohmann::json status_json(const lock::LockState& state);

// status --json's "last_done": {window_start, window_end, host, pid, cmd, at,
// exit, ...} (times as ISO 8601 UTC, with *_ms twins; null for what the record
// does not say readably), or null when NAME has no record.
nlohmann::json last_done_json(const lock::LockState& state);

// The JSON object of a holder record: null when there is none (not rlock's),
// each field null when the record does not say it readably.
nlohmann::json holder_json(const std::optional<lock::HolderRecord>& record);

// Redlock: what each master answered to an acquisition, for --json:
// [{"url", "granted", "answer"}].
nlohmann::json nodes_json(const std::vector<lock::NodeAnswer>& answers);

// status --json's "servers": [{"server", "name", "version"}], each server as
// it names itself in its HELLO reply ("valkey", "8.1.1").
nlohmann::json servers_json(const std::vector<redis::Client::ServerName>& servers);

// One finding in `doctor --json`: {"server", "check", "setting", "verdict", "why"}.
nlohmann::json finding_json(const lock::Finding& finding);

} // namespace rlock::cli
