// `rlock status [NAME...]`: who holds locks, since when and for how long, as
// a table, JSON or OpenMetrics, once or every --watch DUR; exits 1 when a
// named lock is free. Its row, flags, their conversion and handler.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/cmd_status.hpp>
#include <rlock/cli/exit.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/handlers.hpp>
#include <rlock/cli/metrics.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/cli/table.hpp>
#include <rlock/cli/terminal.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/lock.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace rlock::cli {

namespace {

// status --watch: the shortest DUR it takes (without DUR: k_default_watch).
constexpr Millis k_min_watch{100};

// What CLI11 fills in status's own flags.
struct StatusFlags {
  std::string match;
  std::string watch; // "" unless --watch was given (k_default_watch when given without DUR)
  bool list_names = false;
  std::string format;
  std::string output;
};

// status --watch [DUR]: the interval. A value that is no duration is the first
// lock name (`status --watch deploy`: CLI11 gave it to --watch).
Millis watch_interval(const std::string& value, std::vector<std::string>& names) {
  Millis interval{};
  try {
    interval = parse_duration(value, "--watch");
  } catch (const UsageError&) {
    if (value.front() == '-' || std::isdigit(static_cast<unsigned char>(value.front()))) {
      throw; // a mistyped duration, not a name
    }
    names.insert(names.begin(), value);
    interval = k_default_watch;
  }
  if (interval < k_min_watch) {
    throw UsageError(fmt::format("--watch: {} is too short a redraw interval (at least {})",
                                 format_duration(interval), format_duration(k_min_watch)));
  }
  return interval;
}

// --format and --output (--format json is --json).
void convert_status_output(const StatusFlags& raw, Invocation& inv, StatusOptions& status) {
  if (raw.format.empty() || raw.format == "text") {
    status.format = inv.global.json ? StatusFormat::json : StatusFormat::text;
    if (inv.global.json && raw.format == "text") {
      throw UsageError("status: --json and --format text exclude each other");
    }
  } else {
    status.format = raw.format == "json" ? StatusFormat::json : StatusFormat::openmetrics;
    if (inv.global.json && status.format != StatusFormat::json) {
      throw UsageError(fmt::format("status: --json and --format {} exclude each other", raw.format));
    }
    inv.global.json = status.format == StatusFormat::json; // --format json is --json
  }
  if (!raw.output.empty()) {
    status.output = raw.output;
    if (status.format == StatusFormat::text) {
      throw UsageError("status --output writes --format json or openmetrics (the table is for people)");
    }
  }
  if ((status.output || status.format == StatusFormat::openmetrics) && (status.watch || status.list_names)) {
    throw UsageError(fmt::format("status {} takes no {}", status.output ? "--output" : "--format openmetrics",
                                 status.watch ? "--watch (run it from cron or a timer instead)" : "--names"));
  }
}

Convert status_flags(CLI::App& sub, SharedFlags& shared) {
  auto raw = std::make_shared<StatusFlags>();
  add_names(sub, shared, "Locks to show (default: every lock found)", false);
  sub.add_option("--match", raw->match, "Glob pattern of lock names to list (SCAN MATCH)")
      ->type_name("PATTERN");
  sub.add_option("--watch", raw->watch,
                 fmt::format("Redraw every DUR {} until Ctrl-C; off a terminal, one snapshot per DUR",
                             default_of(k_default_watch)))
      ->expected(0, 1)
      ->default_str(format_duration(k_default_watch))
      ->option_text("[DUR]");
  // For the shell completions only, so hidden from --help (group ""): the names
  // of the locks found, one a line, nothing else (rlock(1), FILES).
  sub.add_flag("--names", raw->list_names, "Print only the names of the locks found, one a line")->group("");
  sub.add_option("--format", raw->format,
                 "Output: text (a table), json (as --json) or openmetrics (the Prometheus text format, "
                 "for node_exporter's textfile collector)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "openmetrics"}));
  sub.add_option("--output", raw->output,
                 "Write the json or openmetrics output to FILE atomically (a temp file beside it, then "
                 "renamed) instead of stdout")
      ->type_name("FILE");
  return [raw](Invocation& inv, Env) {
    StatusOptions status;
    status.match = raw->match;
    if (!raw->watch.empty()) {
      status.watch = watch_interval(raw->watch, inv.names);
    }
    names_or_match(inv, status.match);
    status.list_names = raw->list_names;
    if (status.list_names && !inv.names.empty()) {
      throw UsageError(
          "status --names lists the locks found (all, or those of --match PATTERN), not named ones");
    }
    if (status.list_names && status.watch) {
      throw UsageError("status --names prints the names once; it does not take --watch");
    }
    convert_status_output(*raw, inv, status);
    inv.own = std::move(status);
  };
}

// status --json's "schema": raised when a field changes meaning or goes away
// (new fields keep it).
constexpr int k_status_schema = 1;

// The locks `status` shows: the named ones, or every one matching --match.
std::vector<lock::LockState> status_states(Context& ctx) {
  const auto& inv = ctx.inv;
  const auto& own = inv.own_as<StatusOptions>();
  return inv.names.empty() ? ctx.store->find_locks(own.match.empty() ? "*" : own.match)
                           : ctx.store->inspect(inv.names);
}

std::string status_json_text(const Context& ctx, const std::vector<lock::LockState>& states) {
  nlohmann::json locks = nlohmann::json::array();
  for (const auto& state : states) {
    locks.push_back(status_json(state));
  }
  return json_line(
      {{"schema", k_status_schema}, {"locks", locks}, {"servers", servers_json(ctx.store->server_names())}});
}

// status --watch: a frame per interval; a server that cannot be reached is
// said in the frame and asked again at the next one.
int watch_status(Context& ctx) {
  const auto& inv = ctx.inv;
  const auto& own = inv.own_as<StatusOptions>();
  const bool redraw = !inv.global.json && isatty(STDOUT_FILENO);
  std::string what = !inv.names.empty()
                         ? " " + comma_list(inv.names, " ", [](const std::string& n) { return printable(n); })
                     : !own.match.empty() ? " --match " + printable(own.match)
                                          : std::string();
  return watch(*own.watch, redraw, [&](const TableStyle& style) -> std::string {
    std::string body;
    try {
      auto states = status_states(ctx);
      if (inv.global.json) {
        return status_json_text(ctx, states);
      }
      body = states.empty() ? "(no locks)\n" : status_table(states, style, !inv.names.empty());
    } catch (const RedisError& e) {
      if (!lock::acquisition_unavailable(e.kind())) {
        throw;
      }
      if (inv.global.json) {
        // A document still, so a pipeline reading one per frame keeps going:
        // no locks known ("locks": null, not an empty list) and why.
        log::error("{}: {}", ctx.label, e.what());
        return json_line({{"schema", k_status_schema},
                          {"locks", nullptr},
                          {"error", fmt::format("{}: {}", ctx.label, e.what())}});
      }
      body = fmt::format("rlock: {}: {} (trying again every {})\n", ctx.label, e.what(),
                         format_duration(*own.watch));
    }
    std::string title = fmt::format(
        "every {}: rlock status{} on {}    {}", format_duration(*own.watch), what, ctx.store->describe(),
        utc_time(
            std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count()));
    return fit(title, style.width) + "\n\n" + body + (redraw ? "" : "\n");
  });
}

int cmd_status(Context& ctx) {
  const auto& inv = ctx.inv;
  const auto& own = inv.own_as<StatusOptions>();
  if (own.list_names) {
    // The shell completions' helper: names only, one a line (a name with a
    // newline cannot be one completion word, and is left out).
    for (const auto& state : status_states(ctx)) {
      if (state.name.find('\n') == std::string::npos) {
        fmt::print("{}\n", state.name);
      }
    }
    return 0;
  }
  if (own.watch) {
    return watch_status(ctx);
  }
  auto states = status_states(ctx);
  if (own.format == StatusFormat::openmetrics || own.output) {
    auto text =
        own.format == StatusFormat::openmetrics ? openmetrics_text(states) : status_json_text(ctx, states);
    if (own.output) {
      write_file_atomically(*own.output, text);
    } else {
      fmt::print("{}", text);
    }
  } else if (inv.global.json) {
    fmt::print("{}", status_json_text(ctx, states));
  } else {
    fmt::print("{}", status_table(states, stdout_style(), !inv.names.empty()));
    if (states.empty() && isatty(STDOUT_FILENO)) {
      // For people only: a script reading stdout gets nothing, as before.
      log::info("no locks found on {}{}", ctx.store->describe(),
                own.match.empty() ? std::string() : " matching " + quote(own.match));
    }
  }
  bool all_held = std::all_of(states.begin(), states.end(), [](const auto& state) { return state.held(); });
  return inv.names.empty() || all_held ? 0 : exit_code(Outcome::lock_free, inv.global.conflict_exit_code);
}

} // namespace

extern const Subcommand k_status_command;
constexpr Subcommand k_status_command{
    .name = "status",
    .summary = "Show who holds locks, since when and for how long",
    .flags = status_flags,
    .handler = cmd_status,
    .exits = "{ok} ok (with NAMEs: every named lock is held), {not_held} some named lock is free, {usage} "
             "usage, {unavailable} Redis unavailable, {software} internal, {denied} auth denied"};

} // namespace rlock::cli
