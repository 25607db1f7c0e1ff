// The flags several subcommands share, declared for CLI11 and converted into
// Invocation's common fields; the checks of NAME... by the table's columns.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/names.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rlock::cli {

namespace {

// At most this many names in one command (all or none).
constexpr std::size_t k_max_names = 64;
// --limit N: at most this many permits.
constexpr long long k_max_limit = 10'000;

lock::ModeSpec parse_mode(const SharedFlags& raw) {
  lock::ModeSpec mode;
  if (raw.fair) {
    mode.mode = lock::Mode::fair;
  } else if (raw.shared) {
    mode.mode = lock::Mode::read;
  } else if (raw.write) {
    mode.mode = lock::Mode::write;
  } else if (!raw.limit.empty()) {
    mode.mode = lock::Mode::limit;
    long long value = 0;
    auto [ptr, ec] = std::from_chars(raw.limit.data(), raw.limit.data() + raw.limit.size(), value);
    if (ec != std::errc() || ptr != raw.limit.data() + raw.limit.size() || value < 1 || value > k_max_limit) {
      throw UsageError(fmt::format("--limit: '{}' is not a number of holders from 1 to {}",
                                   printable(raw.limit), k_max_limit));
    }
    mode.limit = value;
  }
  return mode;
}

} // namespace

CLI::Option* add_names(CLI::App& sub, SharedFlags& raw, const std::string& help, bool required) {
  auto* names = sub.add_option("NAME", raw.names, help);
  if (required) {
    names->required();
  }
  return names;
}

void add_name(CLI::App& sub, SharedFlags& raw, const std::string& help) {
  sub.add_option("NAME", raw.name, help)->required();
}

void add_ttl(CLI::App& sub, SharedFlags& raw, const std::string& help) {
  sub.add_option("--ttl", raw.ttl, help)->type_name("DUR");
}

void add_wait_flags(CLI::App& sub, SharedFlags& raw) {
  auto* wait =
      sub.add_option("-w,--wait", raw.wait, "Wait up to DUR for the lock (0: try once)")->type_name("DUR");
  auto* no_wait =
      sub.add_flag("-n,--no-wait", raw.no_wait, "Do not wait: fail at once if the lock is busy (default)");
  wait->excludes(no_wait);
}

void add_mode_flags(CLI::App& sub, SharedFlags& raw) {
  auto* fair =
      sub.add_flag("--fair", raw.fair, "Fair lock: waiters get it in arrival order (Redisson RFairLock)");
  auto* shared =
      sub.add_flag("-s,--shared", raw.shared,
                   "Shared (read) lock: many holders, no writer (Redisson RReadWriteLock read side)");
  auto* write = sub.add_flag("--write", raw.write,
                             "Write lock: one holder, no readers (Redisson RReadWriteLock write side)");
  auto* limit = sub.add_option("--limit", raw.limit,
                               "At most N holders at once, each with its own lease "
                               "(Redisson RPermitExpirableSemaphore)")
                    ->type_name("N");
  std::vector<CLI::Option*> modes{fair, shared, write, limit};
  for (auto* a : modes) {
    for (auto* b : modes) {
      if (a != b) {
        a->excludes(b);
      }
    }
  }
}

void add_owner(CLI::App& sub, SharedFlags& raw, const std::string& help) {
  sub.add_option("--owner", raw.owner, help)->type_name("TOKEN");
}

void convert_shared(const SharedFlags& raw, Invocation& inv, Env env) {
  inv.names = raw.names;
  if (!raw.name.empty()) {
    inv.names.push_back(raw.name);
  }
  inv.mode = parse_mode(raw);
  if (inv.mode.mode != lock::Mode::exclusive && inv.global.urls.size() > 1) {
    throw UsageError(
        fmt::format("--{}: modes need one deployment (a server, a Cluster or a Sentinel primary); "
                    "a Redlock over several masters takes exclusive locks only",
                    mode_word(inv.mode.mode)));
  }
  inv.owner = raw.owner;
  if (inv.owner.empty()) {
    if (const char* owner = env("RLOCK_OWNER"); owner != nullptr) {
      inv.owner = owner;
    }
  }
  const char* source = raw.owner.empty() ? "RLOCK_OWNER" : "--owner";
  if (!inv.owner.empty()) {
    lock::check_owner_token(inv.owner, source);
  }
  if (inv.mode.mode == lock::Mode::read && inv.owner.ends_with(":write")) {
    throw UsageError(fmt::format("{}: owner token {} ends with ':write', which names a writer's field of a "
                                 "read-write lock; a reader's token cannot",
                                 source, quote(inv.owner)));
  }
  inv.ttl = optional_duration(raw.ttl, "--ttl");
  // -w 0 tries once, as flock -w 0 does.
  if (!raw.wait.empty() && parse_duration(raw.wait, "--wait", true) > Millis(0)) {
    inv.wait = parse_duration(raw.wait, "--wait");
  }
}

void check_names(Invocation& inv) {
  for (const auto& name : inv.names) {
    lock::keys_for(name); // throws a usage error for a bad name
  }
  if (!inv.sub->takes_lock_names) {
    // status, check: a name given twice is shown (a series, a perfdata label) once.
    std::vector<std::string> once;
    for (const auto& name : inv.names) {
      if (std::find(once.begin(), once.end(), name) == once.end()) {
        once.push_back(name);
      }
    }
    inv.names = std::move(once);
  } else if (inv.names.size() > k_max_names) {
    throw UsageError(
        fmt::format("{} names given; at most {} are taken at once", inv.names.size(), k_max_names));
  } else if (inv.names.size() > 1) {
    auto sorted = inv.names;
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end()) {
      throw UsageError(fmt::format("lock {} is named twice", quote(*twice)));
    }
    for (const auto& name : inv.names) {
      if (name.find(',') != std::string::npos) {
        throw UsageError(fmt::format("lock name {} has a comma: with several names, RLOCK_NAME lists them "
                                     "comma-separated; take it on its own",
                                     quote(name)));
      }
    }
  }
  if (inv.sub->needs_owner && inv.owner.empty()) {
    throw UsageError(fmt::format(
        "{}: which owner? give --owner TOKEN (printed by acquire) or set RLOCK_OWNER", inv.sub->name));
  }
}

std::string default_of(Millis value) {
  return fmt::format("(default {})", format_duration(value));
}

namespace {

// `text` broken into lines of at most `width` columns, at spaces.
std::string wrap_words(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = std::min(text.find(' ', at), text.size());
    std::string_view word = text.substr(at, end - at);
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    at = end + 1;
  }
  return out;
}

} // namespace

std::string exit_footer(const Subcommand* row) {
  auto code = [](ExitCode exit) { return static_cast<int>(exit); };
  // The program's: 1 is each subcommand's own "no" (its --help says which).
  constexpr std::string_view k_program_exits = "{ok} ok, {not_held} as each subcommand says (release, renew: "
                                               "not held by this owner; status NAME: a lock is "
                                               "free; force-unlock: nothing to remove; doctor: unsafe), "
                                               "{usage} usage, {unavailable} Redis unavailable, "
                                               "{software} internal, {busy} busy (-E), {lost} lock lost "
                                               "(while CMD ran, or while waiting for more names), "
                                               "{denied} auth denied; run exits with CMD's status; check "
                                               "with 0-3 (Monitoring Plugins); each subcommand's "
                                               "--help lists its own";
  std::string exits = fmt::format(
      fmt::runtime(row != nullptr ? row->exits : k_program_exits), fmt::arg("ok", code(ExitCode::ok)),
      fmt::arg("not_held", code(ExitCode::not_held)), fmt::arg("usage", code(ExitCode::usage)),
      fmt::arg("unavailable", code(ExitCode::unavailable)), fmt::arg("software", code(ExitCode::software)),
      fmt::arg("busy", code(ExitCode::busy)), fmt::arg("lost", code(ExitCode::lost)),
      fmt::arg("denied", code(ExitCode::denied)), fmt::arg("cannot_execute", code(ExitCode::cannot_execute)),
      fmt::arg("not_found", code(ExitCode::not_found)));
  return fmt::format("Durations: 500ms, 30s, 5m, 2h, 1h30m, 1d, or seconds (0.5).\n{}.\n"
                     "See rlock(1) for the data format, the environment and safety notes.",
                     wrap_words("Exit status: " + exits, 78));
}

std::optional<Millis> optional_duration(const std::string& text, std::string_view flag) {
  if (text.empty()) {
    return std::nullopt;
  }
  return parse_duration(text, flag);
}

void names_or_match(const Invocation& inv, const std::string& match) {
  if (!match.empty() && !inv.names.empty()) {
    throw UsageError(fmt::format("{}: give lock names or --match, not both", inv.sub->name));
  }
}

} // namespace rlock::cli
