#pragma once

#include <rlock/lock/doctor.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/client.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace rlock::cli {

// ISO 8601 UTC ("2026-01-02T03:04:05Z") of ms since the epoch; the record
// parser keeps its times within years 1970-9999.
std::string utc_time(long long epoch_ms);

// "TOKEN on host (pid 12, "cmd"), 12.3s left" for messages about a busy lock;
// what the holder's record does not say is left out ("holder unknown" when
// nothing in it can be read). `asked`: the mode of the request that found it
// busy; a lock held in another layout family says which flag takes it only
// when `asked` is of another family (a reader that finds a writer is told it
// is held for writing, not to take it with --write).
std::string holder_phrase(const lock::Holder& holder, lock::Mode asked = lock::Mode::exclusive);

// The words for the typed state (here only: code decides on the enums).
// A layout: "exclusive", "fair", "read", "write", "semaphore"; "" for none,
// `other_word` for Layout::other.
std::string layout_word(lock::Layout layout, std::string_view other_word);
// status --json's "mode" of a lock: its layout's word (other: the 'mode' field
// as read); "" for none.
std::string mode_word(const lock::LockState& state);
// Whether a busy answer to a request in mode `asked` means that every permit
// of a --limit semaphore is taken (the script said the semaphore's layout).
bool every_permit_taken(const lock::Holder& holder, lock::Mode asked);
// A busy answer's "held_as": the layout's word, "queue" for a fair waiter's
// turn, "?" for other; "" when held in the layout asked for (not said, or
// every permit taken).
std::string held_as_word(const lock::Holder& holder, lock::Mode asked);
// A busy answer's "type": the key's type ("hash", "string"...), "semaphore"
// when every permit is taken.
std::string holder_type_word(const lock::Holder& holder, lock::Mode asked);
// A mode flag's word: "exclusive", "fair", "shared", "write", "limit" (acquire
// --json's "mode"; "--shared", "--limit" in messages).
std::string_view mode_word(lock::Mode mode);
// A doctor verdict: "ok", "warning", "unsafe".
std::string_view verdict_word(lock::Verdict verdict);
// A Redlock master's answer: "granted", "busy", "unreachable: why".
std::string answer_word(const lock::NodeAnswer& answer);

// What a layout means: "a read-write lock held for reading (Redisson
// RReadWriteLock)"... (other: "a lock of another kind (`other_word`)"); with
// `hint`, also the flag that takes it ("...; take it with -s)").
std::string layout_phrase(lock::Layout layout, std::string_view other_word, bool hint = true);

// What a lock is, for `status`: "rlock" (an RLock hash with rlock's record),
// "redisson" (one without: a Redisson client's), "fair", "read-write",
// "semaphore", "foreign" (a key of another type); "" when free.
std::string lock_kind(const lock::LockState& state);

// One line of `status` output for people (Redlock: then one indented line per
// master with its view).
std::string status_line(const lock::LockState& state);

// Redlock: "held on 2 of 3 masters", and each master's view ("  URL: ...").
std::string masters_summary(const lock::LockState& state);
std::vector<std::string> node_lines(const lock::LockState& state);

// The JSON object of one lock in `status --json` (fields documented in README;
// Redlock adds "nodes", each master's view).
nlohmann::json status_json(const lock::LockState& state);

// Who did a `run --once-per` job and when, as far as its record says: "by host
// h pid 12 ("backup.sh") at 2026-11-24T03:00:00Z, exit 0" (what it does not
// say readably is left out; "by an unreadable record" when it says nothing).
std::string done_phrase(const lock::DoneRecord& record);

// `status NAME`'s line about the last completion of `run --once-per`, printed
// after the status line: "  last done: ...", or "" when NAME has no record.
std::string last_done_line(const lock::LockState& state);

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

// `doctor`'s findings for people: one line each ("VERDICT  SERVER  CHECK:
// SETTING: why"), then a summary line.
std::string doctor_text(const std::vector<lock::Finding>& findings);

// status --json's "servers": [{"server", "name", "version"}], each server as
// it names itself in its HELLO reply ("valkey", "8.1.1").
nlohmann::json servers_json(const std::vector<redis::Client::ServerName>& servers);

// One finding in `doctor --json`: {"server", "check", "setting", "verdict", "why"}.
nlohmann::json finding_json(const lock::Finding& finding);

} // namespace rlock::cli
