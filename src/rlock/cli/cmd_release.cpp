// `rlock release NAME...`: undo one level (or every level with --all) of
// this owner's hold on each lock; its row, flags and handler.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>

namespace rlock::cli {

namespace {

// release's own options.
struct ReleaseOptions {
  bool all = false; // --all: every reentry level, not just one
};

Convert release_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<ReleaseOptions>();
  add_names(sub, shared, "Lock name", true);
  add_owner(sub, shared, "Owner token printed by acquire (env RLOCK_OWNER)");
  sub.add_flag("--all", raw->all, "Release every reentry level, not just one");
  add_mode_flags(sub, shared);
  return [raw](Invocation& inv, Env) { inv.own = *raw; };
}

int cmd_release(Context& ctx) {
  const auto& inv = ctx.inv;
  auto released =
      lock::release_all(*ctx.store, ctx.locks, inv.mode.mode, inv.owner, inv.own_as<ReleaseOptions>().all);
  return per_lock_outcome<lock::ReleaseResult>(
      ctx, released.results, released.errors, "released",
      [](nlohmann::json& doc, const lock::ReleaseResult& result) { doc["remaining"] = result.remaining; });
}

} // namespace

extern const Subcommand k_release_command;
constexpr Subcommand k_release_command{
    .name = "release",
    .summary = "Release one level of a lock (or all with --all)",
    .flags = release_flags,
    .handler = cmd_release,
    .needs_owner = true,
    .takes_lock_names = true,
    .exits = "{ok} released, {not_held} not held by this owner, {usage} usage, {unavailable} Redis "
             "unavailable, {software} internal, {denied} auth denied"};

} // namespace rlock::cli
