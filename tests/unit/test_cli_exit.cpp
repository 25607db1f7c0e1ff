#include <rlock/cli/cmd_history.hpp>
#include <rlock/cli/cmd_run.hpp>
#include <rlock/cli/exit.hpp>
#include <rlock/cli/options.hpp>
#include <rlock/core/defaults.hpp>
#include <rlock/core/signals.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <sstream>

using rlock::Outcome;
using rlock::cli::exit_code;

TEST_CASE("exit codes: every outcome has the contract's code, decided in one place") {
  // The man page's EXIT STATUS: 1 says four things, each with its own outcome
  // (a script acts alike on each: there was nothing to do).
  for (auto outcome :
       {Outcome::not_held, Outcome::nothing_removed, Outcome::lock_free, Outcome::unsafe_deployment}) {
    CHECK(exit_code(outcome, 75) == 1);
  }
  // force-unlock --if-dead on a lock still held (its holder alive) is busy, not
  // "nothing to remove": a script cleaning up acts on the difference (issue 31).
  CHECK(exit_code(Outcome::holder_alive, 75) == 75);
  CHECK(exit_code(Outcome::holder_alive, 3) == 3); // -E, as for busy
  CHECK(exit_code(Outcome::usage, 75) == 64);
  CHECK(exit_code(Outcome::bad_setting, 75) == 64); // a database that does not exist, a bad TLS file
  CHECK(exit_code(Outcome::unavailable, 75) == 69);
  CHECK(exit_code(Outcome::failed, 75) == 70);
  CHECK(exit_code(Outcome::busy, 75) == 75);
  CHECK(exit_code(Outcome::lost, 75) == 76);
  CHECK(exit_code(Outcome::denied, 75) == 77);
  CHECK(exit_code(Outcome::cannot_execute, 75) == 126);
  CHECK(exit_code(Outcome::not_found, 75) == 127);
  // -E remaps busy only: never what an unavailable server or a lost lock exits with.
  CHECK(exit_code(Outcome::busy, 69) == 69);
  CHECK(exit_code(Outcome::unavailable, 3) == 69);
  CHECK(exit_code(Outcome::lost, 3) == 76);
  CHECK(exit_code(rlock::Interrupted(SIGTERM), 75) == 128 + SIGTERM);
  CHECK(exit_code(rlock::Error(Outcome::lock_free, "x"), 75) == 1);
}

namespace {
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
} // namespace

TEST_CASE("defaults: the Lua lease default is k_default_lease") {
  // lua/lib/record.lua cannot include core/defaults.hpp: its recorded_lease()
  // repeats the number, and this keeps the two equal.
  const char* src = std::getenv("RLOCK_SRC");
  std::string root = src ? src : RLOCK_SOURCE_DIR;
  auto lua = read_text(root + "/lua/lib/record.lua");
  auto at = lua.find("local function recorded_lease(");
  REQUIRE(at != std::string::npos);
  auto body = lua.substr(at, lua.find("\nend", at) - at);
  CAPTURE(body);
  CHECK(body.ends_with("return " + std::to_string(rlock::k_default_lease.count())));
}

TEST_CASE("defaults: the help text says the defaults the code uses") {
  using rlock::format_duration;
  auto top = rlock::cli::help_text("");
  CHECK(top.find("Connect timeout (default " + format_duration(rlock::k_default_connect_timeout) + ")") !=
        std::string::npos);
  CHECK(top.find("Timeout of each request (default " + format_duration(rlock::k_default_io_timeout) + ")") !=
        std::string::npos);
  CHECK(top.find("(default " + std::to_string(rlock::k_default_conflict_exit_code) + ")") != std::string::npos);
  auto run = rlock::cli::help_text("run");
  CHECK(run.find("(default " + format_duration(rlock::k_default_lease) + ")") != std::string::npos);
  CHECK(run.find("(default " + format_duration(rlock::k_default_kill_after) + ")") != std::string::npos);
  CHECK(rlock::cli::help_text("status").find("(default " + format_duration(rlock::k_default_watch) + ")") !=
        std::string::npos);
  CHECK(top.find("default " + std::string(rlock::k_default_url) + ")") != std::string::npos);
  CHECK(top.find("at most DUR (default " + format_duration(rlock::k_default_sync_timeout) + ")") !=
        std::string::npos);
  CHECK(top.find("(at most " + format_duration(rlock::k_max_automatic_sync) + ")") != std::string::npos);
  CHECK(rlock::cli::help_text("history").find("(default " + std::to_string(rlock::k_default_history_limit) +
                                              ", at most") != std::string::npos);
  CHECK(run.find("(default " + std::string(rlock::cli::k_on_lost_words[0].first) + ")") != std::string::npos);
  CHECK(run.find("(default " + std::string(rlock::cli::k_if_unavailable_words[0].first) + ")") !=
        std::string::npos);
  // And the parser's defaults are the same constants.
  const char* argv[] = {"rlock", "run", "L", "--", "true"};
  auto parsed = rlock::cli::parse(5, argv, [](const char*) -> const char* { return nullptr; });
  REQUIRE(parsed.invocation);
  const auto& run_options = parsed.invocation->own_as<rlock::cli::RunOptions>();
  CHECK(run_options.kill_after == rlock::k_default_kill_after);
  CHECK(run_options.on_lost == rlock::cli::k_on_lost_words[0].second);
  CHECK(run_options.if_unavailable == rlock::cli::k_if_unavailable_words[0].second);
  CHECK(parsed.invocation->global.urls == std::vector<std::string>{std::string(rlock::k_default_url)});
  CHECK(parsed.invocation->global.connect_timeout == rlock::k_default_connect_timeout);
  CHECK(parsed.invocation->global.io_timeout == rlock::k_default_io_timeout);
  CHECK(parsed.invocation->global.conflict_exit_code == rlock::k_default_conflict_exit_code);
  CHECK(parsed.invocation->history.max_len == rlock::k_default_history_max_len);
  CHECK(parsed.invocation->history.ttl == rlock::k_default_history_ttl);
  const char* history_argv[] = {"rlock", "history", "L"};
  auto history = rlock::cli::parse(3, history_argv, [](const char*) -> const char* { return nullptr; });
  REQUIRE(history.invocation);
  CHECK(history.invocation->own_as<rlock::cli::HistoryOptions>().limit == rlock::k_default_history_limit);
}
