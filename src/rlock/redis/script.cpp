#include <rlock/core/log.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

namespace rlock::redis {

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
    auto replies = conn.pipeline(batch, extra);
    conn.note_script(script.sha);
    replies.erase(replies.begin(), replies.begin() + static_cast<long>(before.size() + (load_first ? 1 : 0)));
    return replies;
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
