#pragma once

// Typed lock state in words for people (status lines, busy holders, layouts,
// doctor's findings): code decides on the enums, words are made only here and
// in render_json.

#include <rlock/lock/doctor.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/client.hpp>

#include <optional>
#include <string>

namespace rlock::cli {

// ISO 8601 UTC ("2026-01-02T03:04:05Z") of ms since the epoch; the record
// parser keeps its times within years 1970-9999.
std::string utc_time(long long epoch_ms);

// "12.3s left", "no expiry", "expiring": a lease's time left, for people.
std::string ttl_phrase(Millis ttl);

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
// Redlock: how many masters hold the lock for the majority's owner (or at all).
int masters_holding(const lock::LockState& state);
std::vector<std::string> node_lines(const lock::LockState& state);

// Who did a `run --once-per` job and when, as far as its record says: "by host
// h pid 12 ("backup.sh") at 2026-11-24T03:00:00Z, exit 0" (what it does not
// say readably is left out; "by an unreadable record" when it says nothing).
std::string done_phrase(const lock::DoneRecord& record);

// `status NAME`'s line about the last completion of `run --once-per`, printed
// after the status line: "  last done: ...", or "" when NAME has no record.
std::string last_done_line(const lock::LockState& state);

// `doctor`'s findings for people: one line each ("VERDICT  SERVER  CHECK:
// SETTING: why"), then a summary line.
std::string doctor_text(const std::vector<lock::Finding>& findings);

} // namespace rlock::cli
