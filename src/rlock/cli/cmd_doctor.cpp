// `rlock doctor`: what threatens lock safety on the server(s) (eviction,
// persistence, replicas, clock...); exits 1 when something is unsafe. Its row
// and handler (no flags of its own: -u, --json).

#include <rlock/cli/exit.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/lock/doctor.hpp>
#include <rlock/redis/url.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace rlock::cli {

namespace {

Convert doctor_flags(CLI::App&, SharedFlags&) {
  return [](Invocation&, Env) {};
}

// doctor --json's "schema", as k_status_schema.
constexpr int k_doctor_schema = 1;

int cmd_doctor(Context& ctx) {
  std::vector<lock::Finding> findings;
  for (auto facts : ctx.store->survey()) {
    facts.replica_sync = describe_sync(ctx.inv.global);
    facts.history_enabled = ctx.inv.history.max_len > 0;
    facts.user = redis::parse_url(ctx.inv.global.urls.front()).user;
    auto more = lock::judge_server(facts);
    findings.insert(findings.end(), more.begin(), more.end());
  }
  bool unsafe = std::any_of(findings.begin(), findings.end(), [](const lock::Finding& finding) {
    return finding.verdict == lock::Verdict::unsafe;
  });
  if (ctx.inv.global.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& finding : findings) {
      list.push_back(finding_json(finding));
    }
    print_json({{"schema", k_doctor_schema}, {"safe", !unsafe}, {"findings", list}});
  } else {
    fmt::print("{}", doctor_text(findings));
  }
  return unsafe ? exit_code(Outcome::unsafe_deployment, ctx.inv.global.conflict_exit_code) : 0;
}

} // namespace

extern const Subcommand k_doctor_command;
constexpr Subcommand k_doctor_command{
    .name = "doctor",
    .summary = "Check what threatens lock safety on the server(s): eviction, persistence...",
    .flags = doctor_flags,
    .handler = cmd_doctor,
    .exits = "{ok} nothing unsafe, {not_held} something is unsafe, {usage} usage, {unavailable} Redis "
             "unavailable, {software} internal, {denied} auth denied"};

} // namespace rlock::cli
