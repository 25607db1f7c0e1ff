// `rlock renew NAME...`: set the lease of locks this owner holds; its row,
// flags and handler.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/redis/retry.hpp>

namespace rlock::cli {

namespace {

Convert renew_flags(CLI::App& sub, SharedFlags& shared) {
  add_names(sub, shared, "Lock name", true);
  add_owner(sub, shared, "Owner token printed by acquire (env RLOCK_OWNER)");
  add_ttl(sub, shared, "New lease (default: the lease it was taken with)");
  add_mode_flags(sub, shared);
  return [](Invocation&, Env) {};
}

int cmd_renew(Context& ctx) {
  const auto& inv = ctx.inv;
  auto renewed = lock::renew_all(*ctx.store, ctx.locks, inv.mode.mode, inv.owner, inv.ttl.value_or(Millis(0)),
                                 redis::RetryPolicy::Mode::one_shot,
                                 sync_for(inv.global, inv.ttl.value_or(k_default_lease)));
  return per_lock_outcome<lock::RenewResult>(ctx, renewed.results, renewed.errors, "renewed",
                                             [](nlohmann::json& doc, const lock::RenewResult& result) {
                                               doc["ttl_ms"] = result.lease.count();
                                               if (result.replicas_acked >= 0) {
                                                 doc["replicas_acked"] = result.replicas_acked;
                                               }
                                             });
}

} // namespace

extern const Subcommand k_renew_command;
constexpr Subcommand k_renew_command{
    .name = "renew",
    .summary = "Extend the lease of a lock you hold",
    .flags = renew_flags,
    .handler = cmd_renew,
    .needs_owner = true,
    .takes_lock_names = true,
    .writes_leases = true,
    .exits = "{ok} renewed, {not_held} not held by this owner, {usage} usage, {unavailable} Redis "
             "unavailable, {software} internal, {denied} auth denied"};

} // namespace rlock::cli
