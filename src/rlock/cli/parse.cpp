// argv -> Invocation, without side effects: the CLI11 app made from every row
// of the subcommand table, run's "--" that starts CMD, the order of conversion.

#include <rlock/cli/cli11.hpp>
#include <rlock/cli/flags.hpp>
#include <rlock/cli/options.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>
#include <rlock/core/version.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>

namespace rlock::cli {

namespace {

// The program's CLI11 app, one CLI11 subcommand per row of the table, and
// where CLI11 puts the values: the global options', the shared flags' and
// each subcommand's own (held by its Convert).
struct App {
  CLI::App app{"rlock: distributed locks in Redis for shell scripts, cron and CI, "
               "compatible with Redisson's RLock.",
               "rlock"};
  GlobalFlags global;
  SharedFlags shared;
  std::map<const Subcommand*, CLI::App*> subs;
  std::map<const Subcommand*, Convert> converts;

  CLI::App* sub_named(std::string_view name) const {
    const auto* row = find_subcommand(name);
    auto it = row != nullptr ? subs.find(row) : subs.end();
    return it != subs.end() ? it->second : nullptr;
  }
};

// The subcommands' CLI11 apps and flags: `only`'s row, or every row.
void add_rows(App& a, const Subcommand* only = nullptr) {
  for (const auto* row : subcommands()) {
    if (only != nullptr && row != only) {
      continue;
    }
    auto* sub = a.app.add_subcommand(std::string(row->name), std::string(row->summary));
    sub->footer(std::string()); // not the program's (CLI11 copies it): the row's own exit statuses
    a.subs[row] = sub;
    a.converts[row] = row->flags(*sub, a.shared);
    sub->footer(sub->get_footer() + exit_footer(row));
  }
}

// The app with the global options, and every row unless `rows` is false.
std::unique_ptr<App> make_app(bool rows = true) {
  auto a = std::make_unique<App>();
  auto& app = a->app;
  app.set_version_flag("--version", version_text(false),
                       "Print the version and the git revision it was built from (with --json: as JSON)");
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(exit_footer());
  app.get_formatter()->column_width(32);
  add_global_flags(app, a->global);
  if (rows) {
    add_rows(*a);
  }
  return a;
}

// An option given with an empty value (`--ttl ''`, `--owner "$UNSET"`) is a
// mistake, never a request for the default.
void reject_empty_values(const CLI::App& app) {
  auto check = [](const CLI::App* level) {
    for (const auto* opt : level->get_options()) {
      if (opt->count() == 0 || opt->get_type_size() == 0) {
        continue;
      }
      for (const auto& value : opt->results()) {
        if (value.empty()) {
          std::string name = opt->get_lnames().empty() ? opt->get_name() : "--" + opt->get_lnames().front();
          throw UsageError(fmt::format("{}: empty value", name));
        }
      }
    }
  };
  check(&app);
  for (const auto* sub : app.get_subcommands()) {
    check(sub);
  }
}

// What CLI11 filled, converted and checked: the global options, the shared
// flags, the subcommand's own (its Convert), then NAME... by the row's columns.
Invocation convert(const App& a, const Subcommand& row, std::vector<std::string> child_argv, Env env) {
  Invocation inv;
  inv.sub = &row;
  convert_global(a.global, inv, env);
  convert_shared(a.shared, inv, env);
  if (row.takes_command) {
    inv.child_argv = std::move(child_argv);
  }
  a.converts.at (&row)(inv, env);
  check_names(inv);
  return inv;
}

// Where the words of argv are, read the way CLI11 will read them (an option
// that takes a value consumes the next word unless written --opt=value).
struct ArgvShape {
  int subcommand = 0;       // index of the first positional word (0: none)
  int separator = 0;        // run: index of the "--" that starts CMD (0: none)
  bool name_before = false; // a positional word (NAME) precedes the first "--"
  int stray_option = 0;     // index of an unknown option before the subcommand
  // index of an option that takes a value but is followed by "--" or by
  // nothing (`run N -w -- true`), which CLI11 would take as its value or call
  // missing in its own words
  int missing_value = 0;
  const CLI::Option* missing_option = nullptr;
};

// What a value of type `type_name` is, for "-w: needs a duration".
std::string value_words(const std::string& type_name) {
  if (type_name == "DUR") {
    return "a duration (500ms, 30s, 5m, 1h30m, 1d)";
  }
  if (type_name == "N") {
    return "a number";
  }
  if (type_name == "URL") {
    return "a URL (redis://HOST[:PORT])";
  }
  if (type_name == "FILE") {
    return "a file name";
  }
  return "a value (" + type_name + ")";
}

ArgvShape shape_of(const App& a, int argc, const char* const* argv) {
  ArgvShape shape;
  const CLI::App* level = &a.app;
  int first = 0;  // the first "--" after the subcommand
  int second = 0; // the one after it
  for (int i = 1; i < argc; ++i) {
    std::string_view arg(argv[i]);
    if (arg == "--") {
      if (shape.subcommand == 0 || shape.name_before || first != 0) {
        second = first != 0 ? i : 0;
        first = first != 0 ? first : i;
        break;
      }
      first = i;
      continue;
    }
    if (first != 0) {
      continue; // NAME after "--": only a second "--" matters now
    }
    if (arg.size() > 1 && arg.front() == '-') {
      std::string name(arg.substr(0, arg.find('=')));
      const CLI::Option* opt = level->get_option_no_throw(name);
      if (opt == nullptr && level != &a.app) {
        opt = a.app.get_option_no_throw(name);
      }
      if (opt == nullptr && level == &a.app && name != "-h" && name != "--help") {
        shape.stray_option = i; // its value, if any, would pass for the subcommand
        break;
      }
      bool attached = arg.find('=') != std::string_view::npos || (!arg.starts_with("--") && arg.size() > 2);
      if (opt != nullptr && opt->get_expected_min() > 0 && !attached) {
        if (i + 1 >= argc || std::string_view(argv[i + 1]) == "--") {
          shape.missing_value = i;
          shape.missing_option = opt;
          break;
        }
        ++i; // its value
      }
      continue;
    }
    if (shape.subcommand != 0) {
      shape.name_before = true;
      continue;
    }
    shape.subcommand = i;
    level = a.sub_named(arg);
    if (level == nullptr) {
      break;
    }
  }
  shape.separator = shape.name_before || second == 0 ? first : second;
  return shape;
}

// The row argv's subcommand word names (nullptr: none, or unknown), read with
// the global options of `globals` (they decide which word it is).
const Subcommand* named_row(const App& globals, int argc, const char* const* argv) {
  const ArgvShape shape = shape_of(globals, argc, argv);
  return shape.subcommand != 0 ? find_subcommand(argv[shape.subcommand]) : nullptr;
}

} // namespace

ParseResult parse(int argc, const char* const* argv, Env env) {
  // `run NAME [OPTIONS] -- CMD [ARG...]`: everything after the "--" is the
  // command, never parsed as rlock's flags (as flock(1) does). A NAME that
  // starts with '-' comes after a "--" of its own: `run -- -x -- CMD`.
  // Other subcommands keep "--" as the end of options (`release -- -name`).
  // The subcommand is found with the global options alone (they decide which
  // word it is); then only its row's flags are made, not every row's (most
  // of what building the app costs at each start, bench/README.md).
  auto a = make_app(false);
  const auto* sub = named_row(*a, argc, argv);
  add_rows(*a, sub);
  const ArgvShape shape = shape_of(*a, argc, argv);
  const bool takes_command = sub != nullptr && sub->takes_command;
  int parsed_argc = argc;
  std::vector<std::string> child_argv;
  if (takes_command && shape.separator != 0) {
    parsed_argc = shape.separator;
    child_argv.assign(argv + shape.separator + 1, argv + argc);
  }
  if (shape.missing_value != 0) {
    const std::string_view written(argv[shape.missing_value]);
    const bool last = shape.missing_value + 1 >= argc;
    throw UsageError(fmt::format(
        "{}: needs {} after it, and {} (see rlock --help)", printable(written.substr(0, written.find('='))),
        value_words(shape.missing_option->get_type_name()), last ? "nothing followed" : "got '--'"));
  }
  ParseResult result;
  const bool has_separator = parsed_argc != argc;
  try {
    a->app.parse(parsed_argc, argv);
    reject_empty_values(a->app);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* target = &a->app;
    for (const auto* chosen : a->app.get_subcommands()) {
      target = chosen;
    }
    result.output = target->help();
    return result;
  } catch (const CLI::CallForAllHelp&) {
    result.output = a->app.help("", CLI::AppFormatMode::All);
    return result;
  } catch (const CLI::CallForVersion&) {
    // --json's own value is set by a callback that may not have run yet; its count is.
    result.output = version_text(a->app.get_option("--json")->count() > 0);
    return result;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (takes_command && !has_separator) {
      throw UsageError(fmt::format(
          "{0}: put the command after '--' (rlock {0} NAME [OPTIONS] -- CMD [ARG...])", sub->name));
    }
    if (sub == nullptr && shape.stray_option != 0) {
      what = fmt::format("'{}' is not a global option (a subcommand's options go after it, e.g. "
                         "rlock acquire NAME -w 30s)",
                         printable(argv[shape.stray_option]));
    } else if (sub == nullptr) {
      what = shape.subcommand == 0 ? std::string("no command given")
                                   : fmt::format("unknown command '{}'", printable(argv[shape.subcommand]));
      what += " (" + subcommand_names() + ")";
      if (shape.subcommand != 0 &&
          std::string_view(argv[shape.subcommand]).find("://") != std::string_view::npos) {
        // `-u URL1 URL2 status` (issue 43): one -u takes one URL. The word is
        // not repeated: it may carry a password.
        what = "unknown command: a URL stands where the subcommand goes, and one -u takes one URL: give -u "
               "before each (-u URL1 -u URL2 SUBCOMMAND)";
      }
    } else {
      what = fmt::format("{}: {}", sub->name, what);
    }
    throw UsageError(fmt::format("{} (see rlock --help)", what));
  }
  const CLI::App* chosen = a->app.get_subcommands().front();
  for (const auto& [row, app] : a->subs) {
    if (app == chosen) {
      result.invocation = convert(*a, *row, std::move(child_argv), env);
    }
  }
  return result;
}

const Subcommand* subcommand_in(int argc, const char* const* argv) {
  return named_row(*make_app(false), argc, argv);
}

std::string version_text(bool json) {
  if (json) {
    nlohmann::ordered_json doc{{"version", k_version}, {"revision", build_revision()}};
    return doc.dump() + "\n";
  }
  return fmt::format("rlock {} (git {})\n", k_version, build_revision());
}

std::string help_text(std::string_view subcommand) {
  auto a = make_app();
  if (subcommand.empty()) {
    return a->app.help();
  }
  return a->sub_named(subcommand)->help();
}

std::vector<std::string> all_long_flags() {
  auto a = make_app();
  std::vector<std::string> flags;
  auto collect = [&](const CLI::App* app) {
    for (const auto* opt : app->get_options()) {
      for (const auto& name : opt->get_lnames()) {
        flags.push_back("--" + name);
      }
    }
  };
  collect(&a->app);
  for (const auto& [row, sub] : a->subs) {
    collect(sub);
  }
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

} // namespace rlock::cli
