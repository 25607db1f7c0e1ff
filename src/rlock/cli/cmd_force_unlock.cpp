// `rlock force-unlock NAME [--if-dead]`: its row, flags, handler and exit
// status (1: nothing to remove; --if-dead on a lock still held: busy, 75).

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/if_dead.hpp>

#include <fmt/format.h>

namespace rlock::cli {

namespace {

// force-unlock's own options.
struct ForceUnlockOptions {
  bool if_dead = false; // --if-dead: only when the recorded holder is provably gone
};

Convert force_unlock_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<ForceUnlockOptions>();
  add_names(sub, shared, "Lock name", true)->expected(1);
  sub.add_flag(
      "--if-dead", raw->if_dead,
      "Remove it only when its recorded holder process on this host is gone (if not: why, and the busy "
      "exit code, 75 or -E's; 1 when it is free)");
  return [raw](Invocation& inv, Env) {
    if (raw->if_dead && inv.global.urls.size() > 1) {
      throw UsageError("--if-dead takes one URL: a Redlock's holder record is per master");
    }
    inv.own = *raw;
  };
}

// force-unlock --if-dead (lock::force_unlock_if_dead decides and removes):
// what it did, said.
int force_unlock_if_dead(Context& ctx, const lock::LockState& before) {
  const auto& keys = ctx.locks.front();
  auto done =
      lock::force_unlock_if_dead(*ctx.store, keys, before, lock::ThisHost{host_name(), boot_id()},
                                 [](long long pid) { return process_start(static_cast<pid_t>(pid)); });
  auto verdict = done.verdict;
  if (done.outcome == lock::IfDeadOutcome::free) {
    verdict.why = "nothing to remove: the lock is free";
  }
  if (verdict.alive && before.record && before.record->acquired_at_ms) {
    verdict.why += fmt::format(", holding it since {}", utc_time(*before.record->acquired_at_ms));
  }
  if (verdict.alive && before.record && !before.record->renewed_at_ms) {
    const auto& record = *before.record;
    // A `run` renews first a third of its lease after taking it: a hold
    // younger than that says nothing yet about who holds it (issue 43).
    const bool young = record.acquired_at_ms && record.ttl_ms && before.server_now_ms &&
                       *before.server_now_ms - *record.acquired_at_ms < *record.ttl_ms / 3;
    if (young) {
      verdict.why +=
          fmt::format("; taken {} ago, not renewed yet (a `run` renews a third of its lease, {}, after "
                      "taking it)",
                      format_duration(Millis(*before.server_now_ms - *record.acquired_at_ms)),
                      format_duration(Millis(*record.ttl_ms / 3)));
    } else {
      // Never renewed: most likely a plain `acquire`, whose record names its caller.
      verdict.why +=
          "; never renewed: a plain `acquire` records the process that ran it (a shell, a script, "
          "a wrapper such as `timeout`), which proves that process runs, not that it still needs the lock";
    }
  }
  if (done.outcome == lock::IfDeadOutcome::released_meanwhile) {
    verdict.why = "it was released meanwhile";
  } else if (done.outcome == lock::IfDeadOutcome::changed_hands) {
    verdict.why = "it changed hands meanwhile; nothing removed (run it again to judge the new holder)";
  }
  const bool removed = done.outcome == lock::IfDeadOutcome::removed;
  if (ctx.inv.global.json) {
    print_json(
        {{"name", keys.name}, {"removed", removed}, {"reason", verdict.why}, {"was", status_json(before)}});
  }
  if (!removed) {
    // Free now (it was, or it was released meanwhile): nothing to remove (1).
    // Still held (its holder not provably gone, or a new one): busy (75, -E),
    // a lock to leave alone or try again later.
    const bool free_now = done.outcome == lock::IfDeadOutcome::free ||
                          done.outcome == lock::IfDeadOutcome::released_meanwhile;
    throw Error(free_now ? Outcome::nothing_removed : Outcome::holder_alive,
                before.held() ? fmt::format("not removed: {}", verdict.why) : verdict.why);
  }
  log::info("removed {}: {}", quote(keys.name), verdict.why);
  return 0;
}

int cmd_force_unlock(Context& ctx) {
  const auto& keys = ctx.locks.front();
  auto before = ctx.store->inspect({keys.name});
  if (ctx.inv.own_as<ForceUnlockOptions>().if_dead) {
    return force_unlock_if_dead(ctx, before.front());
  }
  auto removed = ctx.store->force_unlock(keys);
  if (ctx.inv.global.json) {
    print_json({{"name", keys.name}, {"removed", removed.has_value()}, {"was", status_json(before.front())}});
  }
  if (!removed) {
    throw Error(Outcome::nothing_removed, "nothing to remove: the lock is free");
  }
  auto was = status_line(before.front());
  log::info("removed {} ({})", quote(keys.name), was.substr(0, was.find('\n'))); // Redlock: the verdict line
  return 0;
}

} // namespace

extern const Subcommand k_force_unlock_command;
constexpr Subcommand k_force_unlock_command{
    .name = "force-unlock",
    .summary = "Remove a lock whoever holds it (clears a dead holder)",
    .flags = force_unlock_flags,
    .handler = cmd_force_unlock,
    .takes_lock_names = true,
    .exits =
        "{ok} removed, {not_held} nothing to remove (the lock is free), {busy} --if-dead: held, its holder "
        "not provably gone (-E), {usage} usage, {unavailable} Redis unavailable, {software} internal, "
        "{denied} auth denied"};

} // namespace rlock::cli
