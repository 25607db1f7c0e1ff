#include <rlock/core/log.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

namespace rlock::redis {

namespace {

// Redis 7 words an ACL denial inside a script "... can't run this command or
// subcommand script: SHA, on @user_script:LINE." without naming the command:
// find it on that line of the script (its exact text is ours) and say which
// permission is missing.
std::string denied_command_hint(const Script& script, std::string_view message) {
  constexpr std::string_view k_at = "@user_script:";
  auto at = message.find(k_at);
  if (at == std::string_view::npos) {
    return {};
  }
  std::size_t line = 0;
  for (auto i = at + k_at.size(); i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    line = line * 10 + static_cast<std::size_t>(message[i] - '0');
    if (line > 1'000'000) {
      return {};
    }
  }
  std::string_view text = script.text;
  for (std::size_t n = 1; n < line && !text.empty(); ++n) {
    auto eol = text.find('\n');
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
  }
  text = text.substr(0, text.find('\n'));
  for (std::string_view call : {"redis.call('", "redis.pcall('"}) {
    if (auto pos = text.find(call); pos != std::string_view::npos) {
      auto name = text.substr(pos + call.size());
      name = name.substr(0, name.find('\''));
      std::string lower(name);
      for (auto& c : lower) {
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      }
      return fmt::format(" (the {} script calls {} there: the user needs +{})", script.name, name, lower);
    }
  }
  if (text.find("redis.call(") != std::string_view::npos) {
    return fmt::format(" (the {} script publishes there: the user needs +publish, or +spublish on a Cluster)",
                       script.name);
  }
  return {};
}

} // namespace

Argv evalsha_argv(const Script& script, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args) {
  Argv argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVALSHA");
  argv.emplace_back(script.sha);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<Reply> eval_batch(Connection& conn, const Script& script, const Argv& evalsha,
                              const std::vector<Argv>& before, const std::vector<Argv>& after, Millis extra) {
  // A command after the script (WAIT) would run even when the script is not
  // cached (NOSCRIPT), and WAIT blocks for its whole timeout: on a connection
  // that has not run this script yet, SCRIPT LOAD goes first in the batch.
  std::vector<Argv> batch;
  bool load_first = !after.empty() && !conn.knows_script(script.sha);
  if (load_first) {
    batch.push_back({"SCRIPT", "LOAD", std::string(script.text)});
  }
  batch.insert(batch.end(), before.begin(), before.end());
  batch.push_back(evalsha);
  batch.insert(batch.end(), after.begin(), after.end());
  auto run = [&] {
    try {
      auto replies = conn.pipeline(batch, extra);
      conn.note_script(script.sha);
      replies.erase(replies.begin(), replies.begin() + static_cast<long>(before.size() + (load_first ? 1 : 0)));
      return replies;
    } catch (const RedisError& e) {
      if (auto hint = e.kind() == RedisErrorKind::auth ? denied_command_hint(script, e.what()) : std::string();
          !hint.empty()) {
        throw RedisError(e.kind(), e.what() + hint);
      }
      throw;
    }
  };
  try {
    return run();
  } catch (const RedisError& e) {
    if (e.kind() != RedisErrorKind::noscript) {
      throw;
    }
  }
  log::debug("script {} not cached on {}, loading it", script.name, conn.describe());
  Reply loaded = conn.command({"SCRIPT", "LOAD", std::string(script.text)});
  if (loaded.type != Reply::Type::string || loaded.str != script.sha) {
    throw RedisError(RedisErrorKind::protocol, fmt::format("SCRIPT LOAD of {} answered {}, expected SHA1 {}",
                                                           script.name, loaded.summary(), script.sha));
  }
  return run();
}

} // namespace rlock::redis
