// `rlock acquire NAME...`: take locks (or re-enter them) and print the owner
// token; its row, flags and handler.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/redis/errors.hpp>

#include <fmt/format.h>

#include <unistd.h>

namespace rlock::cli {

namespace {

Convert acquire_flags(CLI::App& sub, SharedFlags& shared) {
  add_names(sub, shared, "Lock name (the Redis key); several: all or none", true);
  add_ttl(sub, shared, "Lease: the lock expires unless renewed " + default_of(k_default_lease));
  add_wait_flags(sub, shared);
  add_mode_flags(sub, shared);
  add_owner(sub, shared, "Owner token (env RLOCK_OWNER; default: a new random token)");
  return [](Invocation&, Env) {};
}

// Takes every lock as the invocation asks (waiting, interruptible by `signals`,
// with the terminal display), or ends with the conflict exit code.
std::vector<lock::AcquireResult> acquire_or_busy(Context& ctx, const lock::AcquireRequest& request,
                                                 SignalFd& signals) {
  WaitDisplay display(ctx.inv.mode.mode);
  auto taken = lock::acquire_all(*ctx.store, request, ctx.locks, &signals, wait_display(display));
  if (!taken.acquired) {
    busy(ctx, taken);
  }
  return taken.results;
}

int cmd_acquire(Context& ctx) {
  const auto& inv = ctx.inv;
  auto request =
      lock_request(ctx, holder_info(getppid(), process_command(getppid(), inv.global.record_args)));
  SignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT});
  std::vector<lock::AcquireResult> results;
  try {
    results = acquire_or_busy(ctx, request, signals);
  } catch (const RedisError& e) {
    if (redis::outcome_of(e.kind()) != redis::Outcome::unknown) {
      throw;
    }
    // The last attempt got no answer and the server may still apply it (a
    // resend of it within the latch lifetime would not count twice): say which
    // token would then hold the lock, so it can be released instead of waiting
    // for its lease.
    throw RedisError(e.kind(), request.own_token
                                   ? fmt::format("{}; the server may still apply it: release with --owner {}",
                                                 e.what(), request.owner)
                                   : fmt::format("{}; the server may still apply it (one more level for "
                                                 "--owner {}): check with rlock status",
                                                 e.what(), request.owner));
  }
  if (inv.global.json) {
    nlohmann::json docs = nlohmann::json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& result = results[i];
      nlohmann::json doc{{"name", ctx.locks[i].name},     {"acquired", true},
                         {"owner", request.owner},        {"mode", mode_word(inv.mode.mode)},
                         {"reentered", result.reentered}, {"count", result.count},
                         {"fence", result.fence},         {"ttl_ms", result.lease.count()}};
      if (inv.mode.mode == lock::Mode::limit) {
        doc["limit"] = inv.mode.limit;
      }
      if (result.replicas_acked >= 0) {
        doc["replicas_acked"] = result.replicas_acked;
      }
      if (result.validity) {
        doc["validity_ms"] = result.validity->count();
        doc["nodes"] = nodes_json(result.node_answers);
      }
      docs.push_back(doc);
    }
    print_json(results.size() == 1
                   ? docs.front()
                   : nlohmann::json{{"acquired", true}, {"owner", request.owner}, {"locks", docs}});
  } else {
    fmt::print("{}\n", request.owner);
  }
  return 0;
}

} // namespace

extern const Subcommand k_acquire_command;
constexpr Subcommand k_acquire_command{
    .name = "acquire",
    .summary = "Take a lock (or re-enter it) and print the owner token",
    .flags = acquire_flags,
    .handler = cmd_acquire,
    .takes_lock_names = true,
    .writes_leases = true,
    .exits =
        "{ok} taken (the owner token on stdout), {busy} busy or the wait ran out (-E), {lost} a name already "
        "taken was lost while waiting for the others, {usage} usage, {unavailable} Redis unavailable, "
        "{software} internal, {denied} auth denied"};

} // namespace rlock::cli
