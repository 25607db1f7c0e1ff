// `rlock history NAME`: a lock's past (who held it, for how long, how it
// ended) from its history stream; its row, flags, their conversion and handler.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/cmd_history.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/history.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/url.hpp>

#include <fmt/format.h>

#include <charconv>

namespace rlock::cli {

namespace {

// history --limit N: at most this many events.
constexpr int k_max_history_limit = 10'000;

// history --limit N: 1 to k_max_history_limit events.
int history_limit(const std::string& text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > k_max_history_limit) {
    throw UsageError(fmt::format("history --limit: {} is not a whole number from 1 to {}", quote(text),
                                 k_max_history_limit));
  }
  return static_cast<int>(value);
}

// What CLI11 fills in history's own flags.
struct HistoryFlags {
  std::string limit;
  bool utc = false;
};

Convert history_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<HistoryFlags>();
  add_name(sub, shared, "Lock name (one)");
  sub.add_option("--limit", raw->limit,
                 fmt::format("Show the newest N events (default {}, at most {})", k_default_history_limit,
                             k_max_history_limit))
      ->type_name("N");
  sub.add_flag("--utc", raw->utc, "Times in UTC (default: local time)");
  return [raw](Invocation& inv, Env) {
    HistoryOptions history;
    if (!raw->limit.empty()) {
      history.limit = history_limit(raw->limit);
    }
    history.utc = raw->utc;
    inv.own = history;
  };
}

int cmd_history(Context& ctx) {
  const auto& own = ctx.inv.own_as<HistoryOptions>();
  const auto& keys = ctx.locks.front();
  auto history = ctx.store->history(keys, own.limit);
  auto acl = lock::history_acl(redis::parse_url(ctx.inv.global.urls.front()).user, keys.log);
  if (history.access == lock::LogAccess::no_read) {
    throw Error(Outcome::denied, history_unreadable(keys.log, acl));
  }
  HistoryView view{ctx.inv.global.json, own.utc, static_cast<int>(ctx.inv.global.urls.size())};
  fmt::print("{}", render_history(keys.name, history, view, keys.log, acl));
  return 0;
}

} // namespace

extern const Subcommand k_history_command;
constexpr Subcommand k_history_command{.name = "history",
                                       .summary =
                                           "Show a lock's past: who held it, for how long, how it ended",
                                       .flags = history_flags,
                                       .handler = cmd_history,
                                       .takes_lock_names = true,
                                       .exits = "{ok} shown, {usage} usage, {unavailable} Redis unavailable, "
                                                "{software} internal, {denied} auth denied"};

} // namespace rlock::cli
