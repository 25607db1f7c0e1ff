#pragma once

// What rlock's records say (the holder's 'rlock:meta', a done job's record),
// as far as they can be read.

#include <optional>
#include <string>
#include <string_view>

namespace rlock::lock {

// What rlock's 'rlock:meta' field says about a holder, as far as it can be read.
// The field is data, not trust: anyone can write it. Each value is kept only when
// it has the right type and a sane range; anything else (wrong type, null, a
// huge or fractional number, a non-object document, invalid UTF-8) leaves it
// empty. Nothing in it decides who holds a lock; only `force-unlock --if-dead`
// reads host, boot_id, pid and start_ticks, to decide whether to remove a lock
// the operator asked to remove (a forged record can do no more than plain
// force-unlock does).
struct HolderRecord {
  std::optional<std::string> host;
  std::optional<long long> pid; // 1 .. 2^31-1
  std::optional<std::string> command;
  std::optional<long long> acquired_at_ms; // server time, ms since the epoch (up to year 9999)
  std::optional<long long> ttl_ms;         // the lease it was taken with: 1ms .. 365 days
  std::optional<long long> fence;          // >= 0
  std::optional<std::string> version;
  std::optional<long long> since_ms; // a waiter's record: waiting since (server time, ms)
  std::optional<long long> until_ms; // a waiter's record: its own give-up time (server time, ms)
  std::optional<long long> renewed_at_ms; // the last renewal (server time, ms): run's renewals, renew
  // run --hold-min after CMD ended: the hold is kept to this end (server time,
  // ms), with no renewal after it (lua/lib/record.lua, note_renewal).
  std::optional<long long> kept_until_ms;
  // 1: the hold's release names the plain waiters' turns (lua/lib/turns.lua),
  // so a waiter queued for its turn need not listen on the release channel.
  std::optional<long long> turns;
  // The holding process's identity on its host: the host's boot id
  // (/proc/sys/kernel/random/boot_id) and the process's start time (field 22
  // of /proc/PID/stat, clock ticks after that boot). Absent in records of
  // an older rlock and of other clients.
  std::optional<std::string> boot_id;
  std::optional<long long> start_ticks; // >= 0

  // True when at least one value could be read.
  bool readable() const;
};

// What rlock_done:{NAME} says about the last completion of `run --once-per`
// (written by lua/once_done.lua), as far as it can be read; the same rules as
// HolderRecord: data, not trust, each value kept only with the right type and
// a sane range. `ttl` is the key's PTTL when read (-1: no expiry).
struct DoneRecord {
  std::optional<long long> window_start_ms; // server time, ms since the epoch
  std::optional<long long> window_end_ms;   // > window_start_ms
  std::optional<std::string> host;
  std::optional<long long> pid; // 1 .. 2^31-1
  std::optional<std::string> command;
  std::optional<long long> done_at_ms; // when it was recorded (server time)
  std::optional<long long> exit;       // CMD's exit status: 0 .. 255
  std::string op;                      // the id of the request that wrote it ("": none)
  long long ttl_ms = -2;

  // True when it says when the job was done: the one value a verdict needs.
  bool readable() const { return done_at_ms.has_value(); }
};

// Parses the raw value of rlock_done:{NAME} (a JSON object; '' or anything
// else gives a record with nothing in it). Never throws.
DoneRecord parse_done_record(std::string_view raw, long long ttl_ms);

// Parses the raw value of an 'rlock:meta' field. Never throws: an unreadable
// value gives a record with nothing in it. Strings are cut to 1024 bytes.
HolderRecord parse_holder_record(std::string_view raw);

} // namespace rlock::lock
