// Scripts compiled into the binary, as sent: EVALSHA with the deadline filled
// in per send, loading on NOSCRIPT, and what a refusal says (LATE, an ACL denial).

#include <rlock/core/log.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/script.hpp>
#include <rlock/redis/server_clock.hpp>

#include <fmt/format.h>

#include <charconv>
#include <utility>

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

// The server time a LATE answer names ("... at server time 1700000000123 ...").
std::optional<long long> late_server_ms(std::string_view message) {
  constexpr std::string_view k_at = "at server time ";
  auto at = message.find(k_at);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  auto digits = message.substr(at + k_at.size());
  long long value = -1;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + std::min<std::size_t>(digits.size(), 16), value);
  if (ec != std::errc() || ptr == digits.data() || value < 0) {
    return std::nullopt;
  }
  return value;
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
                              const std::vector<Argv>& before, const std::vector<Argv>& after, Millis extra,
                              TimePoint* sent_out) {
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
  // Where the deadline goes in the batch's EVALSHA: 3 + numkeys + N - 1.
  std::size_t deadline_at = 0;
  const std::size_t evalsha_at = (load_first ? 1 : 0) + before.size();
  if (script.deadline_arg > 0) {
    std::size_t keys = 0;
    std::from_chars(evalsha[2].data(), evalsha[2].data() + evalsha[2].size(), keys);
    deadline_at = 3 + keys + static_cast<std::size_t>(script.deadline_arg) - 1;
    if (deadline_at >= evalsha.size() || evalsha[deadline_at] != k_deadline_slot) {
      throw Error(rlock::Outcome::failed,
                  fmt::format("internal: the {} script's ARGV[{}] is not its deadline slot", script.name,
                              script.deadline_arg));
    }
  }
  const std::string server = server_key(conn.endpoint());
  auto run = [&] {
    long long deadline = 0;
    TimePoint sent = Clock::now();
    if (deadline_at > 0) {
      conn.ensure_connected(); // the reply is awaited from after the connect
      sent = Clock::now();
      // (+1 ms: the connection starts its own wait a few µs later)
      deadline = server_clocks::deadline_for(server, sent + conn.timeouts().io + extra + Millis(1));
      batch[evalsha_at][deadline_at] = std::to_string(deadline);
      if (server_clocks::wants_sample(server, sent)) {
        conn.sample_clock_next();
      }
    }
    try {
      auto replies = conn.pipeline(batch, extra);
      if (sent_out != nullptr) {
        *sent_out = sent;
      }
      conn.note_script(script.sha);
      replies.erase(replies.begin(), replies.begin() + static_cast<long>(before.size() + (load_first ? 1 : 0)));
      return replies;
    } catch (RedisError& e) {
      if (auto hint = e.kind() == RedisErrorKind::auth ? denied_command_hint(script, e.what()) : std::string();
          !hint.empty()) {
        throw RedisError(e.kind(), e.what() + hint);
      }
      if (deadline_at > 0 && e.kind() == RedisErrorKind::late) {
        if (auto at = late_server_ms(e.what())) {
          server_clocks::take(server, {sent, Clock::now(), *at});
        }
      }
      if (outcome_of(e.kind()) == Outcome::unknown) {
        e.set_sent_at(sent); // it may have been applied from then on
      }
      if (deadline_at > 0 && (e.kind() == RedisErrorKind::timeout || e.kind() == RedisErrorKind::io)) {
        if (auto settles = server_clocks::settled_after(server, deadline)) {
          e.set_settles_at(*settles);
        }
      }
      throw;
    }
  };
  // A LATE answer or NOSCRIPT: sent once more (each at most once).
  bool late_again = true;
  bool load_again = true;
  for (;;) {
    try {
      return run();
    } catch (const RedisError& e) {
      if (e.kind() == RedisErrorKind::late && std::exchange(late_again, false)) {
        log::debug("{} on {}: {}; sending it again with the server's clock", script.name, conn.describe(), e.what());
        continue;
      }
      if (e.kind() != RedisErrorKind::noscript || !std::exchange(load_again, false)) {
        throw;
      }
    }
    log::debug("script {} not cached on {}, loading it", script.name, conn.describe());
    Reply loaded = conn.command({"SCRIPT", "LOAD", std::string(script.text)});
    if (loaded.type != Reply::Type::string || loaded.str != script.sha) {
      throw RedisError(RedisErrorKind::protocol, fmt::format("SCRIPT LOAD of {} answered {}, expected SHA1 {}",
                                                             script.name, loaded.summary(), script.sha));
    }
  }
}

} // namespace rlock::redis
