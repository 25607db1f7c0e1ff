#pragma once

// A lock's history: the events scripts append to rlock_log:{NAME}, the
// client's own, and reading them back (one deployment, a Redlock's majority).
//
// A lock's history (`rlock history NAME`, issue 23): every state change appends
// one event to the capped stream rlock_log:{NAME} (LockKeys::log, NAME's hash
// slot) inside the script that makes the change (lua/lib/history.lua), so it
// costs no round trip and a resend that changes nothing logs nothing. What only
// the client knows (a lease lost, a run skipped) is sent once, best effort, by
// log_client_event. Reading: read_history (one deployment) and merge_majority
// (a Redlock: the events a majority of masters hold).

#include <rlock/core/defaults.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/redis/client.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlock::lock {

// How the history is kept: the stream's length (XADD MAXLEN ~ max_len; 0: no
// history is written) and how long it lives after its last event (PEXPIRE).
// From RLOCK_HISTORY_MAXLEN and RLOCK_HISTORY_TTL (cli/).
struct HistorySettings {
  long long max_len = k_default_history_max_len;
  Millis ttl = k_default_history_ttl;
};

using EventFields = std::vector<std::pair<std::string, std::string>>;

// Set once by cli/ before any request: the settings and who this process is (host, pid, command redacted
// as the record has it). Read by every thread afterwards, never changed then.
void configure_history(const HistorySettings& settings, const HolderInfo& who);

// While it lives, a run that lost its lock (it exits 76) releases "as lost":
// every script's history context carries ("as", kind) and ("as_why", why), and a
// release logs `kind` ("lost", with why) instead of "released" (or, finding the
// hold gone or another's, adds it after the hold's ending): the history says
// how the run ended, not that it released normally (issue 30). Set by run/
// around its one release after a loss, while no other thread sends scripts.
class HistoryEnding {
public:
  HistoryEnding(std::string kind, std::string why);
  ~HistoryEnding();
  HistoryEnding(const HistoryEnding&) = delete;
  HistoryEnding& operator=(const HistoryEnding&) = delete;
};

// Appends to a script's KEYS and ARGV what lua/lib/history.lua reads: the log
// key last among the keys, the context last among the arguments (settings,
// host, pid, cmd, ver, then `extras`). Nothing when history is off.
void with_history(std::vector<std::string>& keys, std::vector<std::string>& args, const LockKeys& lock,
                  const EventFields& extras = {});

// Whether a script's keys and arguments end with what with_history added
// (the log key, and the context: a JSON array).
bool carries_history(const std::vector<std::string>& keys, const std::vector<std::string>& args);

// The user may not use the history key `log_key` (NOPERM: its ACL has no key
// pattern for it, like docs/security.md's lock-only user before history came): the
// change was made without it (detail::run_script sends it again without), and
// history is off for the rest of this process (with_history adds nothing). A
// warning says so once, naming the key and the ACL that would allow it. An
// optional feature never stops a lock (issue 30).
void history_refused(const std::string& user, const std::string& log_key);

// The ACL rule that lets `user` ("" = default) keep the history key `log_key`
// ("ACL SETUSER rlock ~rlock_log:{lock:a}", the key as a glob, escaped). Pure.
std::string history_acl(const std::string& user, const std::string& log_key);

// An acquisition's own fields: mode, waited_ms.
EventFields acquisition_history(const AcquireRequest& request);

// A release's own field: the mode of the hold it releases, so that the next
// acquisition reads one event back when that release ended an exclusive hold
// (lib/history.lua's open_holds, issue 45).
EventFields release_history(Mode mode);

// The ms since this process configured its history (it started): an
// acquisition's waited_ms.
long long waited_ms();

// Appends an event only the client knows (kind "lost", "skipped") for `owner`,
// once (never resent), best effort: never throws, logs nothing to stderr.
// Never call it while holding a mutex another thread needs.
void log_client_event(redis::Client& client, const LockKeys& lock, const std::string& kind,
                      const std::string& owner, const EventFields& extras);

// One event read back. Everything in it is data anyone could have written.
struct HistoryEvent {
  std::string id;         // the stream entry id ("1700000000000-0")
  long long at_ms = 0;    // server time in ms (from the id); 0 when malformed
  std::string kind;       // "acquired", "released", ...
  EventFields fields;          // every field but kind, as stored (at most 64, each cut at 1 KiB)
  bool malformed = false; // not an event of ours: shown as such
  int seen_on = 1;        // Redlock: on how many masters

  // The value of `field`, "" when absent.
  std::string get(std::string_view field) const;
};

// Whether the history key can be written (issue 30: an empty history is not
// "never changed by rlock" when it could not have been written).
enum class LogAccess {
  writable,   // a stream, or none yet, and this user may append to it
  unknown,    // a stream or none; whether this user may append, the server cannot tell (before 7.0)
  not_stream, // a key of another type: nothing can be appended (History::log_type says which)
  no_write,   // this user may read it but not append to it (its ACL: XADD, or a read-only key pattern)
  no_read,    // this user may not use the key at all (its ACL has no key pattern for it)
};

struct History {
  std::vector<HistoryEvent> events; // oldest first
  KeyType type = KeyType::none;     // NAME's key type now
  bool redisson = false;            // NAME is held with no rlock record: made by Redisson
  bool ours = false;                // NAME is a hash with an rlock record (held by rlock now)
  LogAccess access = LogAccess::unknown;
  std::optional<KeyType> log_type; // the history key's type; nullopt when it could not be read
};

// The newest `limit` events of NAME and what NAME is now (lua/history_read.lua).
// A user that may not use the history key gets NAME's type and access no_read.
History read_history(redis::Client& client, const LockKeys& lock, int limit);

// Decodes history_read.lua's reply; malformed entries are kept as malformed. Pure.
History decode_history(const redis::Reply& reply);

// A Redlock's history: each master holds its own copy of every event (its own
// stream, its own clock). Events are matched by what the client sent and the
// script found alike on every master (kind, owner, host, pid, cmd, count,
// left, exit, verdict, why: every field but the times *_ms and the fence,
// which each master counts itself), the i-th such event on one master with the
// i-th on another; an event is kept when `need` masters hold it, with the time
// of the earliest of them and the highest fence. Newest `limit` kept. Pure.
History merge_majority(const std::vector<History>& per_master, int need, int limit);

} // namespace rlock::lock
