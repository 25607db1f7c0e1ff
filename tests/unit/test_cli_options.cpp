#include <rlock/cli/cmd_check.hpp>
#include <rlock/cli/cmd_history.hpp>
#include <rlock/cli/cmd_run.hpp>
#include <rlock/cli/cmd_status.hpp>
#include <rlock/cli/options.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/version.hpp>

#include <doctest/doctest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

namespace {
std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
rlock::cli::Invocation parse(std::vector<const char*> args) {
  args.insert(args.begin(), "rlock");
  auto result = rlock::cli::parse(static_cast<int>(args.size()), args.data(), fake_env);
  REQUIRE(result.invocation);
  return *result.invocation;
}
// A usage error whose message says `reason` (not just any UsageError: the
// one this mistake should give).
void usage_error(std::vector<const char*> args, std::string_view reason) {
  args.insert(args.begin(), "rlock");
  CAPTURE(args.size() > 1 ? args[1] : "");
  CAPTURE(reason);
  CHECK_THROWS_WITH_AS(rlock::cli::parse(static_cast<int>(args.size()), args.data(), fake_env),
                       doctest::Contains(std::string(reason).c_str()), rlock::UsageError);
}
using rlock::cli::CheckOptions;
using rlock::cli::HistoryOptions;
using rlock::cli::RunOptions;
using rlock::cli::StatusOptions;
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
} // namespace

TEST_CASE("run: the command after -- is never parsed as rlock's flags") {
  g_env.clear();
  auto inv = parse({"run", "L", "--ttl", "3s", "-w", "1m", "--", "sh", "-c", "echo --ttl", "-v"});
  REQUIRE(inv.sub != nullptr);
  CHECK(inv.sub->name == "run");
  CHECK(inv.names == std::vector<std::string>{"L"});
  CHECK(inv.ttl == rlock::Millis(3000));
  CHECK(inv.wait == rlock::Millis(60'000));
  CHECK(inv.child_argv == std::vector<std::string>{"sh", "-c", "echo --ttl", "-v"});
  CHECK(inv.global.level == rlock::log::Level::normal);
}

TEST_CASE("global options go before or after the subcommand") {
  g_env.clear();
  auto inv = parse({"-u", "redis://h:1", "acquire", "L", "--json", "-E", "3"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://h:1"});
  CHECK(inv.global.json);
  CHECK(inv.global.conflict_exit_code == 3);
  CHECK(!inv.wait);
}

TEST_CASE("owner from RLOCK_OWNER; release needs one") {
  g_env.clear();
  usage_error({"release", "L"}, "release: which owner? give --owner TOKEN (printed by acquire) or set");
  g_env["RLOCK_OWNER"] = "tok";
  CHECK(parse({"release", "L"}).owner == "tok");
  CHECK(parse({"release", "L", "--owner", "other"}).owner == "other");
}

TEST_CASE("usage errors") {
  g_env.clear();
  usage_error({}, "no command given (" + rlock::cli::subcommand_names() + ")");
  usage_error({"frobnicate"}, "unknown command 'frobnicate' (" + rlock::cli::subcommand_names() + ")");
  usage_error({"acquire"}, "acquire: NAME is required");
  usage_error({"acquire", "L", "--bogus"}, "acquire: The following argument was not expected: --bogus");
  usage_error({"acquire", "L", "-w", "1s", "-n"}, "acquire: --wait excludes --no-wait");
  usage_error({"acquire", "L", "--ttl", "0"}, "--ttl: zero duration '0' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)");
  usage_error({"acquire", "", "--ttl", "1s"}, "NAME: empty value");
  usage_error({"run", "L"}, "run: no command given (rlock run NAME -- CMD [ARG...])");
  usage_error({"run", "L", "true"}, "run: no command given (rlock run NAME -- CMD [ARG...])");
  usage_error({"run", "L", "--"}, "run: no command given (rlock run NAME -- CMD [ARG...])");
  usage_error({"run", "L", "--on-lost", "maybe", "--", "true"}, "run: --on-lost: maybe not in {term,kill,ignore}");
  usage_error({"--tls-ca-file", "x", "status"}, "--tls-ca-file: no URL uses TLS; TLS needs rediss://HOST[:PORT], rediss-cluster://");
  usage_error({"-q", "-v", "status"}, "--quiet and --verbose exclude each other");
  usage_error({"-E", "300", "acquire", "L"},
              "--conflict-exit-code: \"300\" is not an exit code (-E takes a whole "
              "number from 0 to 255: the status when the lock is busy");
  // Issue 43: what -E takes, not CLI11's "could not be converted".
  usage_error({"-E", "abc", "acquire", "L"}, "--conflict-exit-code: \"abc\" is not an exit code (-E takes");
  usage_error({"-E", "-1", "acquire", "L"}, "--conflict-exit-code: \"-1\" is not an exit code (-E takes");
  usage_error({"-E", "7x", "acquire", "L"}, "--conflict-exit-code: \"7x\" is not an exit code (-E takes");
  // An option followed by "--" or by nothing: what it needs, not "negative duration '--'".
  usage_error({"run", "N", "-w", "--", "true"},
              "-w: needs a duration (500ms, 30s, 5m, 1h30m, 1d) after it, and got '--'");
  usage_error({"run", "N", "--ttl", "--", "true"}, "--ttl: needs a duration");
  usage_error({"acquire", "N", "-w"},
              "-w: needs a duration (500ms, 30s, 5m, 1h30m, 1d) after it, and nothing followed");
  usage_error({"status", "-u"}, "-u: needs a URL (redis://HOST[:PORT]) after it, and nothing followed");
  usage_error({"-E", "--", "status"}, "-E: needs a number after it, and got '--'");
  usage_error({"status", "A", "--match", "x*"}, "status: give lock names or --match, not both");
}

TEST_CASE("-u takes one URL per occurrence; repeat it for a Redlock (issue 43)") {
  g_env.clear();
  // The word after a -u URL is the subcommand, or NAME: never a second master.
  usage_error(
      {"-u", "redis://a:1", "redis://b:2", "status"},
      "unknown command: a URL stands where the subcommand goes, and one -u takes one URL: give -u before "
      "each (-u URL1 -u URL2 SUBCOMMAND)");
  auto inv = parse({"run", "-u", "redis://a:1", "N", "--", "true"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://a:1"});
  CHECK(inv.names == std::vector<std::string>{"N"});
  CHECK(inv.child_argv == std::vector<std::string>{"true"});
  inv = parse({"status", "-u", "redis://a:1", "N"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://a:1"});
  CHECK(inv.names == std::vector<std::string>{"N"});
  inv = parse({"acquire", "-u", "redis://a:1", "N", "M"});
  CHECK(inv.names == std::vector<std::string>{"N", "M"});
  // Repeated: a Redlock, in the order given, before or after the subcommand.
  inv = parse({"-u", "redis://a:1", "acquire", "-u", "redis://b:2", "N", "--url", "redis://c:3"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://a:1", "redis://b:2", "redis://c:3"});
  inv = parse({"--url=redis://a:1", "-uredis://b:2", "status"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://a:1", "redis://b:2"});
  // A comma list after one -u: said as such (by position: it may hold a password).
  usage_error(
      {"-u", "redis://a:1,redis://b:2", "status"},
      "-u/--url: one -u takes one URL, and -u 1 of 1 is a comma-separated list; for a Redlock give -u "
      "once per master (-u redis://a -u redis://b), or set RLOCK_URL to the list");
  usage_error({"-u", "redis://a:1", "-u", "redis://:secret@b:2,rediss://c:3", "status"},
              "-u 2 of 2 is a comma");
  {
    std::vector<const char*> args{"rlock", "-u", "redis://:secret@b:2,redis://c:3", "status"};
    std::string message;
    try {
      rlock::cli::parse(static_cast<int>(args.size()), args.data(), fake_env);
    } catch (const rlock::UsageError& e) {
      message = e.what();
    }
    CHECK(message.find("one -u takes one URL") != std::string::npos);
    CHECK(message.find("secret") == std::string::npos);
  }
  // Commas that belong to one URL: a Cluster's seeds, a Sentinel's hosts.
  inv = parse({"-u", "redis-cluster://a:1,b:2", "status"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis-cluster://a:1,b:2"});
  inv = parse({"-u", "redis-sentinel://a:1,b:2/mymaster", "status"});
  CHECK(inv.global.urls.size() == 1);
  // RLOCK_URL is still a comma-separated list.
  g_env["RLOCK_URL"] = "redis://a:1,redis://b:2";
  inv = parse({"status"});
  CHECK(inv.global.urls == std::vector<std::string>{"redis://a:1", "redis://b:2"});
  g_env.clear();
}

TEST_CASE("each subcommand's --help says what its own exit statuses mean (issue 43)") {
  auto footer = [](std::string_view sub) {
    auto help = rlock::cli::help_text(sub);
    auto at = help.find("Exit status:");
    REQUIRE(at != std::string::npos);
    auto text = help.substr(at);
    for (auto& c : text) {
      c = c == '\n' ? ' ' : c;
    }
    return text;
  };
  CHECK(footer("release").find("1 not held by this owner") != std::string::npos);
  CHECK(footer("renew").find("1 not held by this owner") != std::string::npos);
  CHECK(footer("doctor").find("1 something is unsafe") != std::string::npos);
  CHECK(footer("doctor").find("not held") == std::string::npos);
  CHECK(footer("status").find("1 some named lock is free") != std::string::npos);
  CHECK(footer("force-unlock").find("1 nothing to remove") != std::string::npos);
  CHECK(footer("force-unlock").find("75 --if-dead: held") != std::string::npos);
  CHECK(footer("check").find("0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN") != std::string::npos);
  CHECK(footer("run").find("CMD's own status") != std::string::npos);
  CHECK(footer("run").find("76 the lock was lost") != std::string::npos);
  CHECK(footer("run").find("127 CMD not found") != std::string::npos);
  // run's own footer text (CMD's environment) is kept before it.
  CHECK(rlock::cli::help_text("run").find("Then: -- CMD [ARG...]") != std::string::npos);
  for (auto sub : {"acquire", "history", "run"}) {
    CAPTURE(sub);
    CHECK(footer(sub).find(" 1 ") == std::string::npos); // they never exit 1
  }
  // Each row has its own list; the program's names each subcommand's 1.
  for (const auto* row : rlock::cli::subcommands()) {
    CAPTURE(row->name);
    CHECK(!row->exits.empty());
    CHECK(footer(row->name).find("{") == std::string::npos);
  }
  CHECK(footer("").find("doctor: unsafe") != std::string::npos);
}

TEST_CASE("TLS options: flags, else RLOCK_TLS_*, only for TLS URLs") {
  g_env.clear();
  // A plain URL has no TLS options; a flag for it is a mistake, the variables are ignored.
  CHECK_FALSE(parse({"status"}).global.tls);
  usage_error({"--tls-insecure", "status"}, "--tls-insecure: no URL uses TLS; TLS needs rediss://HOST[:PORT], rediss-cluster://");
  usage_error({"-u", "redis://h:1", "--tls-server-name", "h", "status"}, "--tls-server-name: no URL uses TLS; TLS needs rediss://HOST[:PORT], rediss-cluster://");
  g_env["RLOCK_TLS_CA_FILE"] = "/env/ca.pem";
  g_env["RLOCK_TLS_INSECURE"] = "1";
  CHECK_FALSE(parse({"-u", "redis://h:1", "status"}).global.tls);

  // rediss://: the variables are the defaults, the flags win.
  auto inv = parse({"-u", "rediss://h:1", "status"});
  REQUIRE(inv.global.tls);
  CHECK(inv.global.tls->ca_file == "/env/ca.pem");
  CHECK(inv.global.tls->insecure);
  g_env.clear();
  inv = parse({"-u", "rediss://h:1", "status"});
  REQUIRE(inv.global.tls);
  CHECK(*inv.global.tls == rlock::redis::TlsOptions{});
  g_env["RLOCK_TLS_CA_FILE"] = "/env/ca.pem";
  g_env["RLOCK_TLS_SERVER_NAME"] = "env.example";
  g_env["RLOCK_TLS_CERT"] = "/env/c.pem";
  g_env["RLOCK_TLS_KEY"] = "/env/k.pem";
  g_env["RLOCK_TLS_INSECURE"] = "0";
  inv = parse({"-u", "rediss://h:1", "--tls-ca-file", "ca.pem", "--tls-server-name", "redis.example",
               "--tls-cert", "c.pem", "--tls-key", "k.pem", "status"});
  REQUIRE(inv.global.tls);
  CHECK(inv.global.tls->ca_file == "ca.pem");
  CHECK(inv.global.tls->server_name == "redis.example");
  CHECK(inv.global.tls->cert == "c.pem");
  CHECK(inv.global.tls->key == "k.pem");
  CHECK_FALSE(inv.global.tls->insecure);
  CHECK(parse({"-u", "rediss://h:1", "--tls-insecure", "status"}).global.tls->insecure);
  // rediss-sentinel://, and a Redlock with one TLS master.
  CHECK(parse({"-u", "rediss-sentinel://s1,s2/m", "status"}).global.tls);
  CHECK(parse({"-u", "redis://a:1", "-u", "rediss://b:1", "--tls-ca-file", "x", "status"}).global.tls);

  g_env.clear();
  usage_error({"-u", "rediss://h:1", "--tls-cert", "c.pem", "status"}, "--tls-cert: a client certificate needs its key (--tls-key FILE or"); // a certificate needs its key
  usage_error({"-u", "rediss://h:1", "--tls-key", "k.pem", "status"}, "--tls-key: a client key needs its certificate (--tls-cert FILE or");
  usage_error({"-u", "rediss://h:1", "--tls-ca-file", "", "status"}, "--tls-ca-file: empty value");
  g_env["RLOCK_TLS_INSECURE"] = "maybe";
  usage_error({"-u", "rediss://h:1", "status"}, "RLOCK_TLS_INSECURE: 'maybe' is not 1 or 0");
  g_env.clear();
}

TEST_CASE("help and version print and exit 0") {
  std::vector<const char*> args{"rlock", "--help"};
  auto result = rlock::cli::parse(2, args.data(), fake_env);
  CHECK(!result.invocation);
  CHECK(result.exit_code == 0);
  for (const auto* sub : rlock::cli::subcommands()) {
    CHECK(result.output.find(std::string(sub->name)) != std::string::npos);
  }
  args = {"rlock", "run", "--help"};
  result = rlock::cli::parse(3, args.data(), fake_env);
  CHECK(!result.invocation);
  CHECK(result.exit_code == 0);
  CHECK(result.output.find("--max-hold") != std::string::npos);
  args = {"rlock", "--version"};
  result = rlock::cli::parse(2, args.data(), fake_env);
  CHECK(!result.invocation);
  CHECK(result.exit_code == 0);
  CHECK(result.output == "rlock " RLOCK_VERSION " (git " + std::string(rlock::build_revision()) + ")\n");
  for (auto json_args : {std::vector<const char*>{"rlock", "--version", "--json"},
                         std::vector<const char*>{"rlock", "--json", "--version"}}) {
    result = rlock::cli::parse(3, json_args.data(), fake_env);
    CHECK(!result.invocation);
    CHECK(result.output ==
          R"({"version":")" RLOCK_VERSION R"(","revision":")" + std::string(rlock::build_revision()) + "\"}\n");
  }
  CHECK(!rlock::build_revision().empty());
}

// Whether `word` occurs in `text` as a whole token: not inside a longer name
// ("run" in "running", "--wait" in "--wait-descendants"). Roff's font escapes
// (\fB, \fI, \fR, \fP) count as spaces.
static bool has_token(const std::string& text, std::string_view word) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool roff_before = at >= 3 && text[at - 3] == '\\' && text[at - 2] == 'f';
    bool starts = at == 0 || roff_before || !name_char(text[at - 1]);
    std::size_t end = at + word.size();
    bool ends = end == text.size() || !name_char(text[end]);
    if (starts && ends) {
      return true;
    }
  }
  return false;
}

TEST_CASE("has_token: whole names only") {
  CHECK(has_token("rlock run NAME", "run"));
  CHECK_FALSE(has_token("while running", "run"));
  CHECK_FALSE(has_token("--wait-descendants", "--wait"));
  CHECK(has_token("[--wait DUR]", "--wait"));
  CHECK(has_token("\\fBrun\\fR", "run"));
  CHECK(has_token("-l ttl -d", "-l ttl"));
  CHECK_FALSE(has_token("-l ttl-max", "-l ttl"));
}

TEST_CASE("man page and completions name every subcommand and long flag") {
  const char* src = std::getenv("RLOCK_SRC");
  std::string root = src ? src : RLOCK_SOURCE_DIR;
  // roff writes a literal hyphen as \-; compare the text as the reader sees it.
  auto man = read(root + "/man/rlock.1");
  for (auto at = man.find("\\-"); at != std::string::npos; at = man.find("\\-", at))
    man.erase(at, 1);
  auto bash = read(root + "/completions/rlock.bash");
  auto zsh = read(root + "/completions/_rlock");
  auto fish = read(root + "/completions/rlock.fish");
  REQUIRE(!man.empty());
  REQUIRE(!bash.empty());
  REQUIRE(!zsh.empty());
  REQUIRE(!fish.empty());
  for (const auto* sub : rlock::cli::subcommands()) {
    CAPTURE(sub->name);
    CHECK(has_token(man, sub->name));
    CHECK(has_token(bash, sub->name));
    CHECK(has_token(zsh, sub->name));
    CHECK(has_token(fish, sub->name));
    CHECK(has_token(rlock::cli::help_text(""), sub->name));
  }
  for (const auto& flag : rlock::cli::all_long_flags()) {
    CAPTURE(flag);
    CHECK(has_token(man, flag));
    CHECK(has_token(bash, flag));
    CHECK(has_token(zsh, flag));
    // fish names a long option without its dashes (`complete ... -l ttl`);
    // status --names is not offered, only called to list lock names.
    CHECK(has_token(fish, flag == "--names" ? flag : "-l " + flag.substr(2)));
  }
}

TEST_CASE("modes and several names") {
  auto inv = parse({"acquire", "A", "B", "--fair"});
  CHECK(inv.names == std::vector<std::string>{"A", "B"});
  CHECK(inv.mode.mode == rlock::lock::Mode::fair);
  CHECK(parse({"run", "X", "-s", "--", "true"}).mode.mode == rlock::lock::Mode::read);
  CHECK(parse({"release", "X", "--write", "--owner", "o"}).mode.mode == rlock::lock::Mode::write);
  auto limited = parse({"run", "X", "Y", "--limit", "3", "--", "true"});
  CHECK(limited.mode.mode == rlock::lock::Mode::limit);
  CHECK(limited.mode.limit == 3);
  CHECK(limited.names.size() == 2);
  CHECK(limited.child_argv == std::vector<std::string>{"true"});
  CHECK(parse({"acquire", "X"}).mode.mode == rlock::lock::Mode::exclusive);
  usage_error({"acquire", "X", "-s", "--write"}, "acquire: --shared excludes --write");
  usage_error({"acquire", "X", "--limit", "0"}, "--limit: '0' is not a number of holders from 1 to 10000");
  usage_error({"acquire", "X", "--limit", "10001"}, "--limit: '10001' is not a number of holders from 1 to 10000");
  usage_error({"acquire", "X", "--limit", "2x"}, "--limit: '2x' is not a number of holders from 1 to 10000");
  usage_error({"acquire", "X", "Y", "X"}, "lock \"X\" is named twice");
  usage_error({"run", "a,b", "c", "--", "true"}, "lock name \"a,b\" has a comma: with several names, RLOCK_NAME lists");
  usage_error({"-u", "redis://h1", "-u", "redis://h2", "acquire", "X", "--fair"}, "--fair: modes need one deployment (a server, a Cluster or a Sentinel");
  CHECK(parse({"-u", "redis://h1", "-u", "redis://h2", "acquire", "X", "Y"}).names.size() == 2);
}

TEST_CASE("a reader's token cannot end with :write (it would name a writer's field)") {
  usage_error({"acquire", "X", "-s", "--owner", "t:write"}, "--owner: owner token \"t:write\" ends with ':write', which names a");
  CHECK(parse({"acquire", "X", "--write", "--owner", "t:write"}).owner == "t:write");
}

TEST_CASE("at most 64 names at once; the help says NAME...") {
  std::vector<std::string> names;
  for (int i = 0; i < 65; ++i) {
    names.push_back("n" + std::to_string(i));
  }
  std::vector<const char*> args{"acquire"};
  for (const auto& name : names) {
    args.push_back(name.c_str());
  }
  usage_error(args, "65 names given; at most 64 are taken at once");
  args.pop_back();
  CHECK(parse(args).names.size() == 64);
  CHECK(rlock::cli::help_text("run").find("NAME...") != std::string::npos);
}

TEST_CASE("status --watch [DUR]: the interval, 2s without one; a word after it is a lock name") {
  g_env.clear();
  CHECK_FALSE(parse({"status"}).own_as<StatusOptions>().watch);
  CHECK(parse({"status", "--watch"}).own_as<StatusOptions>().watch == rlock::Millis(2000));
  auto inv = parse({"status", "--watch", "500ms", "a"});
  CHECK(inv.own_as<StatusOptions>().watch == rlock::Millis(500));
  CHECK(inv.names == std::vector<std::string>{"a"});
  inv = parse({"status", "--watch", "deploy", "b"});
  CHECK(inv.own_as<StatusOptions>().watch == rlock::Millis(2000));
  CHECK(inv.names == std::vector<std::string>{"deploy", "b"});
  inv = parse({"status", "a", "--watch"});
  CHECK(inv.names == std::vector<std::string>{"a"});
  CHECK(parse({"status", "--watch=1m", "--match", "x*"}).own_as<StatusOptions>().watch == rlock::Millis(60'000));
  usage_error({"status", "--watch", "50ms"}, "--watch: 50ms is too short a redraw interval (at least 100ms)"); // too short
  usage_error({"status", "--watch", "5x"}, "--watch: bad duration '5x' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)");   // a mistyped duration
  usage_error({"status", "--watch=0"}, "--watch: zero duration '0' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)");
  usage_error({"acquire", "A", "--watch"}, "acquire: The following argument was not expected: --watch");
}

TEST_CASE("run --once-per and --if-unavailable") {
  g_env.clear();
  auto inv = parse({"run", "L", "--once-per", "1d", "--if-unavailable", "skip", "--", "true"});
  CHECK(inv.own_as<RunOptions>().once_per == rlock::Millis(86'400'000));
  CHECK(inv.own_as<RunOptions>().if_unavailable == rlock::cli::IfUnavailable::skip);
  inv = parse({"run", "L", "--fair", "--once-per", "2s", "--", "true"});
  CHECK(inv.own_as<RunOptions>().once_per == rlock::Millis(2000));
  CHECK(inv.own_as<RunOptions>().if_unavailable == rlock::cli::IfUnavailable::fail);
  CHECK(parse({"run", "L", "--if-unavailable", "run", "--", "true"}).own_as<RunOptions>().if_unavailable ==
        rlock::cli::IfUnavailable::run);
  CHECK(!parse({"run", "L", "--", "true"}).own_as<RunOptions>().once_per);
  usage_error({"run", "L", "--once-per", "0", "--", "true"}, "--once-per: zero duration '0' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)");
  usage_error({"run", "L", "--once-per", "-1s", "--", "true"}, "--once-per: negative duration '-1s' (use e.g. 500ms, 30s, 5m, 1h30m,");
  usage_error({"run", "L", "--once-per", "soon", "--", "true"}, "--once-per: bad duration 'soon' (use e.g. 500ms, 30s, 5m, 1h30m, 1d)");
  usage_error({"run", "L", "--once-per", "", "--", "true"}, "--once-per: empty value");
  usage_error({"run", "L", "--if-unavailable", "maybe", "--", "true"}, "run: --if-unavailable: maybe not in {fail,skip,run}");
  usage_error({"run", "L", "M", "--once-per", "1d", "--", "true"}, "--once-per takes one NAME: the record of a done job is kept beside");
  usage_error({"run", "L", "-s", "--once-per", "1d", "--", "true"}, "--once-per with --shared: a once-per-window job needs a plain or");
  usage_error({"run", "L", "--write", "--once-per", "1d", "--", "true"}, "--once-per with --write: a once-per-window job needs a plain or");
  usage_error({"run", "L", "--limit", "2", "--once-per", "1d", "--", "true"}, "--once-per with --limit: a once-per-window job needs a plain or");
  usage_error({"-u", "redis://a:1", "-u", "redis://b:1", "run", "L", "--once-per", "1d", "--", "true"}, "--once-per takes one URL: a Redlock over several masters has no one");
  usage_error({"acquire", "L", "--once-per", "1d"}, "acquire: The following argument was not expected: --once-per");
  usage_error({"status", "L", "--if-unavailable", "run"}, "status: The following argument was not expected: --if-unavailable");
}

TEST_CASE("status --names: the completions' helper, hidden from --help") {
  CHECK(parse({"status", "--names"}).own_as<StatusOptions>().list_names);
  CHECK(parse({"status", "--names", "--match", "job-*"}).own_as<StatusOptions>().match == "job-*");
  CHECK_FALSE(parse({"status"}).own_as<StatusOptions>().list_names);
  usage_error({"status", "X", "--names"}, "status --names lists the locks found (all, or those of --match");
  CHECK(rlock::cli::help_text("status").find("--names") == std::string::npos);
}

TEST_CASE("check: thresholds WARN,CRIT, the flags, and what is refused") {
  g_env.clear();
  auto inv = parse({"check", "a", "b", "--held-longer", "30m,2h", "--waiters", "0,5", "--dead-holder", "--ttl-none",
                    "--done-within", "26h"});
  CHECK(inv.sub->name == "check");
  CHECK(inv.names == std::vector<std::string>{"a", "b"});
  REQUIRE(inv.own_as<CheckOptions>().spec.held_longer);
  CHECK(inv.own_as<CheckOptions>().spec.held_longer->warn == rlock::Millis(30 * 60'000));
  CHECK(inv.own_as<CheckOptions>().spec.held_longer->crit == rlock::Millis(2 * 3'600'000));
  REQUIRE(inv.own_as<CheckOptions>().spec.waiters);
  CHECK(inv.own_as<CheckOptions>().spec.waiters->warn == 0);
  CHECK(inv.own_as<CheckOptions>().spec.waiters->crit == 5);
  CHECK(inv.own_as<CheckOptions>().spec.dead_holder);
  CHECK(inv.own_as<CheckOptions>().spec.ttl_none);
  CHECK(inv.own_as<CheckOptions>().spec.done_within == rlock::Millis(26 * 3'600'000));
  CHECK(parse({"check", "--match", "job:*"}).own_as<CheckOptions>().match == "job:*");
  CHECK(parse({"check", "a", "a"}).names.size() == 1); // reads only, as status; a name twice is judged once
  usage_error({"check", "a", "--held-longer", "2h,1h"}, "WARN is above CRIT");
  usage_error({"check", "a", "--held-longer", "1h"}, "is not WARN,CRIT");
  usage_error({"check", "a", "--held-longer", "1h,2h,3h"}, "is not WARN,CRIT");
  usage_error({"check", "a", "--waiters", "x,2"}, "'x' is not a count");
  usage_error({"check", "a", "--waiters", "-1,2"}, "'-1' is not a count");
  usage_error({"check", "a", "--match", "x*"}, "give lock names or --match, not both");
  usage_error({"check", "--match", "x*", "--done-within", "1h"}, "--done-within needs the jobs' NAMEs");
  usage_error({"check", "a", "--json"}, "it has no --json");
  usage_error({"-u", "redis://h:1", "-u", "redis://h:2", "check", "a", "--dead-holder"}, "--dead-holder takes one URL");
  usage_error({"-u", "redis://h:1", "-u", "redis://h:2", "check", "a", "--done-within", "1h"}, "--done-within takes one URL");
  CHECK(parse({"-u", "redis://h:1", "-u", "redis://h:2", "check", "a", "--held-longer", "1h,2h"}).own_as<CheckOptions>().spec.held_longer);
}

TEST_CASE("status --format: text, json (= --json), openmetrics; --output") {
  g_env.clear();
  CHECK(parse({"status"}).own_as<StatusOptions>().format == rlock::cli::StatusFormat::text);
  CHECK(parse({"status", "--json"}).own_as<StatusOptions>().format == rlock::cli::StatusFormat::json);
  auto inv = parse({"status", "--format", "json"});
  CHECK(inv.own_as<StatusOptions>().format == rlock::cli::StatusFormat::json);
  CHECK(inv.global.json);
  inv = parse({"status", "--format", "openmetrics", "--output", "/tmp/x.prom"});
  CHECK(inv.own_as<StatusOptions>().format == rlock::cli::StatusFormat::openmetrics);
  CHECK(!inv.global.json);
  CHECK(inv.own_as<StatusOptions>().output == "/tmp/x.prom");
  CHECK(parse({"--json", "status", "--format", "json"}).global.json);
  usage_error({"--json", "status", "--format", "openmetrics"}, "--json and --format openmetrics exclude each other");
  usage_error({"--json", "status", "--format", "text"}, "--json and --format text exclude each other");
  usage_error({"status", "--format", "yaml"}, "yaml not in {text,json,openmetrics}");
  usage_error({"status", "--output", "/tmp/x"}, "--output writes --format json or openmetrics");
  usage_error({"status", "--format", "openmetrics", "--watch", "1s"}, "openmetrics takes no --watch");
  usage_error({"status", "--format", "json", "--output", "/tmp/x", "--watch", "1s"}, "--output takes no --watch");
  usage_error({"status", "--format", "openmetrics", "--names"}, "openmetrics takes no --names");
}

TEST_CASE("history: one NAME, --limit 1 to 10000") {
  g_env.clear();
  CHECK(parse({"history", "a", "--limit", "5"}).own_as<HistoryOptions>().limit == 5);
  usage_error({"history", "a", "b"}, "The following argument was not expected: b");
  usage_error({"history"}, "NAME is required");
  usage_error({"history", "a", "--limit", "0"}, "is not a whole number from 1 to 10000");
}

TEST_CASE("a bad history setting is a warning and the default, for every subcommand (issue 30)") {
  for (const char* sub : {"release", "acquire", "status", "check", "history", "force-unlock", "renew"}) {
    CAPTURE(sub);
    g_env = {{"RLOCK_HISTORY_MAXLEN", "x"}, {"RLOCK_HISTORY_TTL", "forever"}, {"RLOCK_OWNER", "o"}};
    std::vector<const char*> args{sub};
    if (std::string_view(sub) != "status" && std::string_view(sub) != "check") {
      args.push_back("L");
    }
    auto inv = parse(args);
    CHECK(inv.history.max_len == rlock::lock::HistorySettings{}.max_len);
    CHECK(inv.history.ttl == rlock::lock::HistorySettings{}.ttl);
    REQUIRE(inv.warnings.size() == 2);
    CHECK(inv.warnings[0].find("RLOCK_HISTORY_MAXLEN: \"x\" is not a whole number from 0 to 1000000; using 1000") !=
          std::string::npos);
    CHECK(inv.warnings[1].find("RLOCK_HISTORY_TTL") != std::string::npos);
    CHECK(inv.warnings[1].find("using 30d") != std::string::npos);
  }
  g_env = {{"RLOCK_HISTORY_MAXLEN", "0"}, {"RLOCK_HISTORY_TTL", "1h"}};
  auto inv = parse({"status"});
  CHECK(inv.history.max_len == 0);
  CHECK(inv.history.ttl == rlock::Millis(3'600'000));
  CHECK(inv.warnings.empty());
  g_env.clear();
}

TEST_CASE("status and check: a name given twice is shown once (issue 30)") {
  g_env.clear();
  CHECK(parse({"status", "rd", "x", "rd", "--format", "openmetrics"}).names == std::vector<std::string>{"rd", "x"});
  CHECK(parse({"check", "rd", "rd", "--ttl-none"}).names == std::vector<std::string>{"rd"});
  usage_error({"acquire", "rd", "rd"}, "is named twice");
}

TEST_CASE("the recorded command line: the program and *** for each argument, unless --record-args (issue 30)") {
  using rlock::cli::recorded_command_line;
  std::vector<std::string> backup{"mysqldump", "-pSECRET", "--api-key=k3y", "Authorization: Bearer t0ken", "db"};
  auto masked = recorded_command_line(backup, false);
  CHECK(masked == "mysqldump *** *** *** ***");
  for (const char* secret : {"SECRET", "k3y", "t0ken", "Bearer"}) {
    CHECK(masked.find(secret) == std::string::npos);
  }
  CHECK(recorded_command_line({"./backup.sh"}, false) == "./backup.sh");
  CHECK(recorded_command_line({}, false).empty());
  // Asked for: the arguments, still with the known masks (URL passwords, -a, *PASS*=).
  CHECK(recorded_command_line({"redis-cli", "-a", "pw", "-u", "redis://u:pw2@h"}, true) ==
        "redis-cli -a *** -u redis://u:***@h");
  CHECK(recorded_command_line(backup, true) == "mysqldump -pSECRET --api-key=k3y Authorization: Bearer t0ken db");
  // A program given with a URL password in its path is masked as well.
  CHECK(recorded_command_line({"redis://u:pw@h/x", "a"}, false) == "redis://u:***@h/x ***");
  CHECK(recorded_command_line({std::string(300, 'x')}, false) == std::string(200, 'x') + "...");
}

// Issue 44 (fuzz_password_file): the arguments were joined and then cut at
// spaces, so a password of several words after -a, a PASSWORD= value with a
// space, or a URL password with a space kept all but their first word.
TEST_CASE("the recorded command line masks each argument whole, spaces and all, and the words inside it") {
  using rlock::cli::recorded_command_line;
  CHECK(recorded_command_line({"redis-cli", "-a", "two words", "PING"}, true) == "redis-cli -a *** PING");
  CHECK(recorded_command_line({"redis-cli", "-a", " sp@s~codic~odil il n=", "PING"}, true) ==
        "redis-cli -a *** PING");
  CHECK(recorded_command_line({"redis-cli", "--pass", " "}, true) == "redis-cli --pass ***");
  CHECK(recorded_command_line({"env", "DB_PASSWORD=a b c", "job"}, true) == "env DB_PASSWORD=*** job");
  CHECK(recorded_command_line({"job", "redis://u:p w@h"}, true) == "job redis://u:***@h");
  // A shell script given as one argument is masked word by word, and a
  // password flag that ends an argument masks the next.
  CHECK(recorded_command_line({"sh", "-c", "redis-cli -a pw1 -u redis://:pw2@h X_TOKEN=t1", "--pass"}, true) ==
        "sh -c redis-cli -a *** -u redis://:***@h X_TOKEN=*** --pass");
  // An argument that starts with a secret's NAME= is masked to its end.
  CHECK(recorded_command_line({"sh", "-c", "X_TOKEN=t1 job"}, true) == "sh -c X_TOKEN=***");
  CHECK(recorded_command_line({"sh", "-c", "redis-cli -a", "pw"}, true) == "sh -c redis-cli -a ***");
}

TEST_CASE("--record-args, else RLOCK_RECORD_ARGS=1; a bad value is a warning and off (issue 30)") {
  g_env.clear();
  CHECK_FALSE(parse({"acquire", "L"}).global.record_args);
  CHECK(parse({"--record-args", "acquire", "L"}).global.record_args);
  CHECK(parse({"run", "L", "--record-args", "--", "true"}).global.record_args);
  auto run = parse({"run", "L", "--", "cmd", "--record-args"});
  CHECK_FALSE(run.global.record_args); // CMD's own flag
  g_env = {{"RLOCK_RECORD_ARGS", "1"}};
  CHECK(parse({"acquire", "L"}).global.record_args);
  g_env = {{"RLOCK_RECORD_ARGS", "0"}};
  CHECK_FALSE(parse({"acquire", "L"}).global.record_args);
  CHECK(parse({"--record-args", "acquire", "L"}).global.record_args);
  g_env = {{"RLOCK_RECORD_ARGS", "yes"}};
  auto inv = parse({"release", "L", "--owner", "o"});
  CHECK_FALSE(inv.global.record_args);
  REQUIRE(inv.warnings.size() == 1);
  CHECK(inv.warnings[0] == "RLOCK_RECORD_ARGS: \"yes\" is neither 1 nor 0; arguments are not recorded");
  g_env.clear();
}
