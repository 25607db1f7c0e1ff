// `rlock check`, the monitoring plugin: its row, flags, their conversion and
// handler (one line, exit 0 to 3; every error UNKNOWN, 3).

#include <rlock/cli/check.hpp>
#include <rlock/cli/cli11.hpp>
#include <rlock/cli/cmd_check.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/proc.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/liveness.hpp>

#include <fmt/format.h>

#include <charconv>

namespace rlock::cli {

namespace {

// What CLI11 fills in check's own flags.
struct CheckFlags {
  std::string match;
  std::string held_longer;
  bool dead_holder = false;
  std::string waiters;
  bool ttl_none = false;
  std::string done_within;
};

// WARN,CRIT of --held-longer (durations) or --waiters (counts), warn <= crit.
template <class T, class Parse>
Thresholds<T> parse_thresholds(const std::string& text, std::string_view flag, Parse&& parse) {
  auto comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    throw UsageError(
        fmt::format("{}: '{}' is not WARN,CRIT (two values, comma-separated)", flag, printable(text)));
  }
  Thresholds<T> thresholds{parse(text.substr(0, comma)), parse(text.substr(comma + 1))};
  if (thresholds.warn > thresholds.crit) {
    throw UsageError(fmt::format("{}: WARN is above CRIT in '{}'", flag, printable(text)));
  }
  return thresholds;
}

long long parse_count(const std::string& text, std::string_view flag) {
  long long value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    throw UsageError(fmt::format("{}: '{}' is not a count (0 or more)", flag, printable(text)));
  }
  return value;
}

// check's thresholds, and what it refuses.
CheckOptions convert_check(const CheckFlags& raw, const Invocation& inv) {
  CheckOptions check;
  check.match = raw.match;
  names_or_match(inv, check.match);
  auto& spec = check.spec;
  if (!raw.held_longer.empty()) {
    spec.held_longer =
        parse_thresholds<Millis>(raw.held_longer, "--held-longer", [](const std::string& text) {
          return parse_duration(text, "--held-longer");
        });
  }
  if (!raw.waiters.empty()) {
    spec.waiters = parse_thresholds<long long>(
        raw.waiters, "--waiters", [](const std::string& text) { return parse_count(text, "--waiters"); });
  }
  spec.dead_holder = raw.dead_holder;
  spec.ttl_none = raw.ttl_none;
  if (!raw.done_within.empty()) {
    spec.done_within = parse_duration(raw.done_within, "--done-within");
  }
  if (inv.global.json) {
    throw UsageError("check prints the Monitoring Plugins' line; it has no --json (see status --json)");
  }
  if (spec.dead_holder && inv.global.urls.size() > 1) {
    throw UsageError(
        "--dead-holder takes one URL, as force-unlock --if-dead: a Redlock's holder record is per master");
  }
  if (spec.done_within && inv.global.urls.size() > 1) {
    throw UsageError(
        "--done-within takes one URL, as run --once-per: a Redlock has no one place for the record");
  }
  if (spec.done_within && inv.names.empty()) {
    throw UsageError("--done-within needs the jobs' NAMEs: --match lists only locks held now, and a job that "
                     "is not running holds none");
  }
  return check;
}

Convert check_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<CheckFlags>();
  add_names(sub, shared, "Locks to check (default: every lock found, or those of --match)", false);
  sub.add_option("--match", raw->match, "Check every lock whose name matches this glob (as status --match)")
      ->type_name("PATTERN");
  sub.add_option("--held-longer", raw->held_longer,
                 "WARNING when a lock is held for more than WARN, CRITICAL for more than CRIT")
      ->type_name("WARN,CRIT");
  sub.add_flag("--dead-holder", raw->dead_holder,
               "CRITICAL when force-unlock --if-dead would remove a lock: its holder process on this host "
               "is gone");
  sub.add_option("--waiters", raw->waiters,
                 "WARNING when more than WARN waiters queue for a fair lock, CRITICAL for more than CRIT")
      ->type_name("WARN,CRIT");
  sub.add_flag("--ttl-none", raw->ttl_none, "CRITICAL when a lock is held without an expiry");
  sub.add_option("--done-within", raw->done_within,
                 "For run --once-per jobs: CRITICAL when NAME's last completion is older than DUR, or none "
                 "is recorded")
      ->type_name("DUR");
  sub.footer("Exit status (Monitoring Plugins): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (Redis\n"
             "unreachable, denied, a usage error); one line on stdout: RLOCK STATE - ... | perfdata.\n"
             "-E does not apply.");
  return [raw](Invocation& inv, Env) { inv.own = convert_check(*raw, inv); };
}

int cmd_check(Context& ctx) {
  const auto& inv = ctx.inv;
  const auto& own = inv.own_as<CheckOptions>();
  auto states = inv.names.empty() ? ctx.store->find_locks(own.match.empty() ? "*" : own.match)
                                  : ctx.store->inspect(inv.names);
  std::vector<LockVerdict> verdicts;
  const lock::ThisHost here{host_name(), boot_id()};
  for (const auto& state : states) {
    std::optional<lock::HolderVerdict> holder;
    if (own.spec.dead_holder && state.held()) {
      // The very verdict force-unlock --if-dead acts on.
      holder = lock::judge_holder(state, here,
                                  [](long long pid) { return process_start(static_cast<pid_t>(pid)); });
    }
    verdicts.push_back(judge_lock(state, own.spec, holder));
  }
  auto line = check_line(states, verdicts, own.spec, !inv.names.empty());
  fmt::print("{}", line);
  CheckState overall = CheckState::ok;
  for (const auto& verdict : verdicts) {
    overall = worse(overall, verdict.state);
  }
  return static_cast<int>(overall);
}

} // namespace

extern const Subcommand k_check_command;
constexpr Subcommand k_check_command{
    .name = "check",
    .summary = "Monitoring plugin (Nagios, Icinga...): stuck locks, dead holders, missed once-per jobs",
    .flags = check_flags,
    .handler = cmd_check,
    .on_error = check_unknown,
    .exits = "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the Monitoring Plugins rules; also a usage or Redis "
             "error)"};

} // namespace rlock::cli
