#pragma once

// The steps more than one subcommand's handler takes: the holder record, the
// lock request, waiting with the terminal display, the busy answer, the
// per-lock outcome of release and renew, one JSON document on stdout.

#include <rlock/cli/context.hpp>
#include <rlock/core/clock.hpp>
#include <rlock/core/signals.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/lock/waiter.hpp>

#include <nlohmann/json.hpp>

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace rlock::cli {

// One JSON document on one line (invalid UTF-8 from Redis replaced, never
// thrown on), and printed on stdout.
std::string json_line(const nlohmann::json& doc);
void print_json(const nlohmann::json& doc);

// "a, b, c": `text` of each item, in order, `separator` between.
template <typename Item, typename Fn>
std::string comma_list(const std::vector<Item>& items, std::string_view separator, Fn&& text) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : std::string(separator)) + text(item);
  }
  return out;
}

// The command line of process `pid` (its argv from /proc), as recorded:
// recorded_command_line, arguments only with `with_args`.
std::string process_command(pid_t pid, bool with_args);

// Who takes a lock, for its record: this host (and boot), process `pid` and
// its start time, so `force-unlock --if-dead` can tell when it is gone.
lock::HolderInfo holder_info(pid_t pid, std::string command);

// When a waiter off a terminal (a CI job's log, cron's mail) says a line: when
// its wait begins, then once every `k_every`, or at once when it waits for
// another lock or another holder (issue 43). Pure: `now` is given.
class WaitLinePace {
public:
  static constexpr Millis k_every{60'000};
  // Whether a line is due at `now` while `who` (the lock and its holder) keeps
  // it waiting; a due line counts as said.
  bool due(TimePoint now, const std::string& who);

private:
  std::optional<TimePoint> m_last;
  std::string m_who;
};

// What a waiter shows on stderr: on a terminal, one line rewritten in place
// each second and cleared when it goes; elsewhere, lines of their own at
// WaitLinePace's pace, which stay (who holds it, where, since when).
class WaitDisplay {
public:
  explicit WaitDisplay(lock::Mode asked);
  ~WaitDisplay();
  WaitDisplay(const WaitDisplay&) = delete;
  WaitDisplay& operator=(const WaitDisplay&) = delete;
  void operator()(const std::string& name, const lock::Holder& holder, Millis wait_left);

private:
  lock::Mode m_asked;
  bool m_terminal;
  bool m_shown = false;
  WaitLinePace m_pace;
  std::optional<TimePoint> m_began;
};

// `display` as the waiter's callback, none with -q.
lock::NamedBusyCallback wait_display(WaitDisplay& display);

// The lock request of `acquire` and `run` (keys: each of ctx.locks in turn).
lock::AcquireRequest lock_request(const Context& ctx, lock::HolderInfo info);

// A busy lock, or a wait that ran out: its JSON with --json, then
// Error(Outcome::busy) naming the holder.
[[noreturn]] void busy(const Context& ctx, const lock::Taken& taken);

// Why release or renew did nothing (`detail`: for OwnerCheck::other and
// layout, `type`: foreign, `layout`: layout).
std::string not_held_reason(lock::OwnerCheck check, const std::string& detail, lock::KeyType type,
                            lock::Layout layout);

// release and renew of each name, done independently: one JSON object per
// lock (`done_key` true or false, and `extra`'s fields) with --json; returns
// 0 when each was done, else throws: the error reaching Redis (naming its
// lock), or Error(not_held) with why.
template <typename Result>
int per_lock_outcome(const Context& ctx, const std::vector<Result>& results,
                     const std::vector<std::exception_ptr>& errors, const char* done_key,
                     const std::function<void(nlohmann::json&, const Result&)>& extra);

} // namespace rlock::cli
