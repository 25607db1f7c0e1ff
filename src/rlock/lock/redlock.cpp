// The Redlock store: each request to every master at once, and the majority's
// verdict (quorum.hpp) on what they answered.

#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/doctor.hpp>
#include <rlock/lock/waiter.hpp>
#include <rlock/lock/quorum.hpp>
#include <rlock/lock/redlock.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>


#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

namespace rlock::lock {

namespace {

// Runs f(0) ... f(n-1) at once, each on its own thread (f(0) on this one), and
// returns when all have. f must not throw.
template <class F> void fan_out(std::size_t n, const F& f) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 1; i < n; ++i) {
    threads.emplace_back([&f, i] { f(i); });
  }
  if (n > 0) {
    f(0);
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

// One master's answer: a value or the error it gave.
template <class T> struct Answer {
  std::optional<T> value;
  std::optional<RedisError> error;
};

// What a master's failed request says, naming the master.
RedisError node_error(const redis::Client& node, const std::exception& e) {
  const auto* redis = dynamic_cast<const RedisError*>(&e);
  return RedisError(redis != nullptr ? redis->kind() : RedisErrorKind::server,
                    fmt::format("{}: {}", node.describe(), e.what()));
}

// Calls `request(client, i)` on every master at once (master i: nodes[i]).
template <class T, class F>
std::vector<Answer<T>> ask_each(std::vector<redis::Client>& nodes, const F& request) {
  std::vector<Answer<T>> answers(nodes.size());
  fan_out(nodes.size(), [&](std::size_t i) {
    try {
      answers[i].value = request(nodes[i], i);
    } catch (const std::exception& e) {
      answers[i].error = node_error(nodes[i], e);
    }
  });
  return answers;
}

// Calls `request(client)` on every master at once.
template <class T, class F>
std::vector<Answer<T>> ask_all(std::vector<redis::Client>& nodes, const F& request) {
  return ask_each<T>(nodes, [&](redis::Client& node, std::size_t) { return request(node); });
}

Millis since(TimePoint start) {
  return std::chrono::ceil<Millis>(Clock::now() - start);
}

// The first error of `answers` of kind `kind`, if any.
template <class T>
std::optional<RedisError> first_error(const std::vector<Answer<T>>& answers,
                                      std::optional<RedisErrorKind> kind = std::nullopt) {
  for (const auto& answer : answers) {
    if (answer.error && (!kind || answer.error->kind() == *kind)) {
      return answer.error;
    }
  }
  return std::nullopt;
}

// The error for a round without a majority: `what` happened, then each failing
// master's error (each names its master), briefly.
template <class T> RedisError quorum_error(const std::string& what, const std::vector<Answer<T>>& answers) {
  constexpr std::size_t k_brief = 160;
  std::string out = what;
  for (const auto& answer : answers) {
    if (answer.error) {
      std::string why = answer.error->what();
      if (why.size() > k_brief) {
        why = why.substr(0, k_brief - 3) + "...";
      }
      out += "; " + why;
    }
  }
  return RedisError(RedisErrorKind::quorum, out);
}

template <class T> int answered(const std::vector<Answer<T>>& answers) {
  return static_cast<int>(
      std::count_if(answers.begin(), answers.end(), [](const auto& a) { return a.value.has_value(); }));
}

class RedlockStore final : public Store {
public:
  RedlockStore(std::vector<redis::Endpoint> masters, redis::Timeouts timeouts)
      : m_masters(std::move(masters)), m_timeouts(timeouts) {
    for (auto master : m_masters) {
      master.identify = true; // run_id with the first request's HELLO: no extra round trip
      m_nodes.emplace_back(master, timeouts);
    }
  }

  // Throws Error(bad_setting) when two masters turned out to be one server (the same
  // run_id on the connections made so far): URLs no address showed to be one
  // (a unix socket and TCP, 0.0.0.0 and 127.0.0.1, two seeds of one Cluster).
  // Costs nothing: the run_ids came with the first request's HELLO.
  void check_independent() const {
    std::vector<std::vector<std::string>> ids;
    for (const auto& node : m_nodes) {
      ids.push_back(node.run_ids());
    }
    if (auto twice = redis::same_server(ids)) {
      throw Error(Outcome::bad_setting,
                  redis::same_server_message(m_masters[twice->first], m_masters[twice->second],
                                             "run_id " + twice->address));
    }
  }

  std::unique_ptr<Store> fresh(std::optional<Millis> cap) const override {
    auto copy = std::make_unique<RedlockStore>(m_masters, cap ? m_timeouts.capped(*cap) : m_timeouts);
    copy->m_holder = m_holder;
    copy->m_held = m_held; // shared: the renewal thread's re-grants, the release after a lost lease
    return copy;
  }

  AcquireResult acquire(const AcquireRequest& request, SignalFd* signals, const BusyCallback& on_busy,
                        const KeepAlive& keep_alive) override;
  ReleaseResult release(const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                        redis::RetryPolicy::Mode retry) override;
  RenewResult renew(const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                    redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) override;
  std::optional<KeyType> force_unlock(const LockKeys& keys) override;
  ConditionalRemoval force_unlock_if(const LockKeys&, const ExpectedHold&) override {
    throw Error(Outcome::bad_setting, "--if-dead takes one URL: a Redlock's holder record is per master");
  }
  DoneResult record_done(const LockKeys&, const std::string&, Millis, const HolderInfo&, int) override {
    throw Error(Outcome::bad_setting, "--once-per takes one URL: a Redlock has no one place for the record");
  }
  std::vector<LockState> inspect(const std::vector<std::string>& names) override;
  std::vector<LockState> find_locks(const std::string& pattern) override;
  History history(const LockKeys& keys, int limit) override;
  void leave_queue(const LockKeys& keys, Mode mode, const std::string& owner) noexcept override {
    try {
      fan_out(m_nodes.size(), [&](std::size_t i) { lock::leave_queue(m_nodes[i], keys, mode, owner); });
    } catch (...) {
      // best effort: a place left behind is given up at its deadline
    }
  }
  void log_event(const LockKeys& keys, const std::string& kind, const std::string& owner,
                 const EventFields& extras) override {
    fan_out(m_nodes.size(), [&](std::size_t i) { log_client_event(m_nodes[i], keys, kind, owner, extras); });
  }
  // Each name's state from every master's view of `names` (answers[i]: master
  // i's states in the order of `names`, or its error): the majority's holder.
  std::vector<LockState> combine(const std::vector<std::string>& names,
                                 const std::vector<Answer<std::vector<LockState>>>& answers);

  void refresh() override {
    for (auto& node : m_nodes) {
      node.refresh();
    }
  }

  std::vector<ServerFacts> survey() override {
    std::vector<ServerFacts> out;
    for (auto& node : m_nodes) {
      try {
        out.push_back(lock::survey(node, node.primaries().front(), "redlock master"));
      } catch (const RedisError& e) {
        ServerFacts facts;
        facts.server = node.describe();
        facts.unreachable = e.what();
        out.push_back(facts);
      }
    }
    // Two URLs that no address showed to be one server (a unix socket and TCP,
    // 0.0.0.0 and 127.0.0.1, two seeds of one Cluster) but that are: one vote twice.
    if (auto twice = same_run_id(out)) {
      throw Error(Outcome::bad_setting,
                  redis::same_server_message(m_masters[twice->first], m_masters[twice->second],
                                             "run_id " + out[twice->first].run_id));
    }
    return out;
  }

  std::vector<redis::Client::ServerName> server_names() const override {
    std::vector<redis::Client::ServerName> out;
    for (const auto& node : m_nodes) {
      auto names = node.server_names();
      out.insert(out.end(), names.begin(), names.end());
    }
    return out;
  }

  std::string describe() const override {
    std::string out;
    for (const auto& master : m_masters) {
      out += (out.empty() ? "" : ",") + master.display();
    }
    return out;
  }

private:
  int need() const { return majority(static_cast<int>(m_nodes.size())); }
  std::string count_phrase(int yes) const {
    return fmt::format("{} of {} masters (a majority is {})", yes, m_nodes.size(), need());
  }
  AcquireResult round(const AcquireRequest& request);
  void undo(const AcquireRequest& request, const std::string& round_op,
            const std::vector<Answer<AcquireResult>>& answers);

  // How the release of one level of a hold this process took undoes it on
  // each master (level_release), per name: where the acquisition's answer was
  // lost and the token was given, only if the round's latch says it was
  // applied there. Shared by every fresh() copy.
  struct HeldLevels {
    std::string owner;
    std::string op_id; // the round that took it
    std::vector<LevelRelease> how;
  };
  struct Held {
    std::mutex mutex;
    std::map<std::string, HeldLevels> by_name;
  };
  void remember_levels(const AcquireRequest& request, const std::string& op_id,
                       const std::vector<Answer<AcquireResult>>& answers);
  std::optional<HeldLevels> take_levels(const std::string& name, const std::string& owner);
  void level_is_ours(const std::string& name, const std::string& owner, std::size_t master);

  std::vector<redis::Endpoint> m_masters;
  redis::Timeouts m_timeouts;
  std::vector<redis::Client> m_nodes;
  // The last acquisition's request: a master that restarted empty is granted
  // the lock again with the same record (renew).
  std::optional<AcquireRequest> m_holder;
  std::shared_ptr<Held> m_held = std::make_shared<Held>();
};

void RedlockStore::remember_levels(const AcquireRequest& request, const std::string& op_id,
                                   const std::vector<Answer<AcquireResult>>& answers) {
  HeldLevels levels{request.owner, op_id, {}};
  for (const auto& answer : answers) {
    levels.how.push_back(level_release(answer.value.has_value(), request.own_token));
  }
  std::lock_guard<std::mutex> guard(m_held->mutex);
  m_held->by_name.insert_or_assign(request.keys.name, std::move(levels));
}

// What remember_levels kept for `name` held by `owner` (forgotten: one release
// undoes it).
std::optional<RedlockStore::HeldLevels> RedlockStore::take_levels(const std::string& name,
                                                                  const std::string& owner) {
  std::lock_guard<std::mutex> guard(m_held->mutex);
  auto it = m_held->by_name.find(name);
  if (it == m_held->by_name.end() || it->second.owner != owner) {
    return std::nullopt;
  }
  auto levels = std::move(it->second);
  m_held->by_name.erase(it);
  return levels;
}

// A renewal granted `name` again on `master` (it had lost it): that level is
// this hold's.
void RedlockStore::level_is_ours(const std::string& name, const std::string& owner, std::size_t master) {
  std::lock_guard<std::mutex> guard(m_held->mutex);
  auto it = m_held->by_name.find(name);
  if (it != m_held->by_name.end() && it->second.owner == owner && master < it->second.how.size()) {
    it->second.how[master] = LevelRelease::plain;
  }
}

// Releases what a failed round took, on every master at once (`undo_on`
// decides how): one level where it was granted, and where the answer was lost
// (for a token made by this process a plain release: nobody else has it, where
// it is not nothing happens; for a given token, a re-entry, where a level may
// be an older one of ours, only if that master's latch of this round says it
// was applied). A master that gave no answer in time is sent the release
// through a connection of its own whose answer is awaited only k_undo_wait
// (issue 19: the failure must not wait on frozen masters); what it keeps
// otherwise expires with its lease.
void RedlockStore::undo(const AcquireRequest& request, const std::string& round_op,
                        const std::vector<Answer<AcquireResult>>& answers) {
  const auto op_id = new_op_id();
  std::vector<std::pair<std::size_t, Undo>> targets;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    bool granted = answers[i].value && answers[i].value->acquired;
    std::optional<RedisErrorKind> error;
    if (answers[i].error) {
      error = answers[i].error->kind();
    }
    if (auto how = undo_on(granted, error); how != Undo::skip) {
      targets.emplace_back(i, how);
    }
  }
  fan_out(targets.size(), [&](std::size_t k) {
    auto [i, how] = targets[k];
    const std::string latch =
        level_release(answers[i].value.has_value(), request.own_token) == LevelRelease::if_applied
            ? round_op
            : std::string();
    try {
      if (how == Undo::send_only) {
        redis::Client brief(
            m_masters[i], {std::min(m_timeouts.connect, k_undo_wait), std::min(m_timeouts.io, k_undo_wait)});
        lock::release(brief, request.keys, request.mode.mode, request.owner, false, op_id, latch);
      } else {
        lock::release(m_nodes[i], request.keys, request.mode.mode, request.owner, false, op_id, latch);
      }
    } catch (const std::exception& e) {
      log::debug("{}: undoing the acquisition{}: {}", m_masters[i].display(),
                 how == Undo::send_only ? " (sent; what it keeps expires with its lease)" : "", e.what());
    }
  });
}

AcquireResult RedlockStore::round(const AcquireRequest& request) {
  const auto op_id = new_op_id();
  const TimePoint start = Clock::now();
  redis::RetryScope scope{redis::RetryPolicy(m_timeouts, redis::RetryPolicy::Mode::renewal),
                          !request.own_token,
                          std::nullopt,
                          {}};
  auto answers = ask_all<AcquireResult>(
      m_nodes, [&](redis::Client& node) { return try_acquire(node, request, op_id, scope); });
  try {
    check_independent();
  } catch (const Error&) {
    undo(request, op_id, answers); // what it took there is ours: given back before refusing
    throw;
  }

  std::vector<Vote> votes;
  AcquireResult result;
  result.sent_at = start;
  std::vector<std::size_t> granted;
  bool busy_seen = false;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const auto& answer = answers[i];
    NodeAnswer said{m_masters[i].display(), NodeAnswer::Kind::unreachable, {}};
    if (!answer.value) {
      votes.push_back(Vote::unreachable);
      said.detail = std::string(answer.error->what()).substr(0, k_node_detail_max);
    } else if (answer.value->acquired) {
      votes.push_back(Vote::yes);
      granted.push_back(i);
      said.kind = NodeAnswer::Kind::granted;
    } else {
      votes.push_back(Vote::no);
      said.kind = NodeAnswer::Kind::busy;
      // The holder shown and waited for: the one whose lease ends first.
      const auto& holder = answer.value->holder;
      if (!busy_seen || (holder.ttl.count() >= 0 && holder.ttl < result.holder.ttl)) {
        result.holder = holder;
      }
      busy_seen = true;
    }
    result.node_answers.push_back(std::move(said));
  }

  // The fencing token: the largest granting counter, raised on every granting
  // master; a majority must end up at least that high.
  long long fence = 0;
  for (auto i : granted) {
    fence = std::max(fence, answers[i].value->fence);
  }
  auto tallied = tally(votes);
  if (tallied.yes >= need() && fence > 0) {
    std::vector<int> raised(m_nodes.size(), 0);
    fan_out(granted.size(), [&](std::size_t k) {
      auto i = granted[k];
      try {
        auto reply = detail::run_script(m_nodes[i], scope, scripts::fence_raise,
                                        {request.keys.fence_key, request.keys.name},
                                        {std::to_string(fence), request.owner, std::string(redis::k_deadline_slot)});
        raised[i] = reply.reply.as_integer() >= fence ? 1 : 0;
      } catch (const std::exception& e) {
        log::debug("{}: raising the fencing counter: {}", m_masters[i].display(), e.what());
      }
    });
    int confirmed = 0;
    for (auto i : granted) {
      confirmed += raised[i];
    }
    if (confirmed < need()) {
      tallied.yes = confirmed; // too few masters carry the token: not held
      tallied.unreachable += static_cast<int>(granted.size()) - confirmed;
    }
  }

  auto verdict = judge_acquire(tallied, request.lease, since(start));
  result.validity = verdict.validity;
  if (verdict.kind == AcquireVerdict::Kind::held) {
    const auto& first = *answers[granted.front()].value;
    result.acquired = true;
    result.reentered = first.reentered;
    result.fence = fence;
    result.lease = first.lease;
    for (auto i : granted) {
      result.count = std::max(result.count, answers[i].value->count);
    }
    result.holder = {};
    m_holder = request;
    remember_levels(request, op_id, answers);
    return result;
  }
  undo(request, op_id, answers);
  if (verdict.kind == AcquireVerdict::Kind::busy) {
    return result;
  }
  if (auto denied = first_error(answers, RedisErrorKind::auth)) {
    throw *denied;
  }
  throw quorum_error(
      tallied.yes >= need()
          ? fmt::format("granted by {}, but too late: {} of the {} lease left (elapsed + drift allowance)",
                        count_phrase(tallied.yes), format_duration(std::max(Millis(0), verdict.validity)),
                        format_duration(request.lease))
          : fmt::format("quorum not reached: granted by {}", count_phrase(tallied.yes)),
      answers);
}

// The one waiter (lock/waiter: WaitPlan), one subscription per master.
AcquireResult RedlockStore::acquire(const AcquireRequest& request, SignalFd* signals, const BusyCallback& on_busy,
                                    const KeepAlive& keep_alive) {
  WaitOn on;
  for (auto& node : m_nodes) {
    on.nodes.push_back(&node);
  }
  on.attempt = [&](const redis::RetryScope&, const std::optional<Turn>&) { return round(request); };
  on.quorum = true;
  return wait_for(on, request, signals, on_busy, keep_alive);
}

ReleaseResult RedlockStore::release(const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                                    redis::RetryPolicy::Mode retry) {
  const auto op_id = new_op_id();
  // One level of a hold this process took: where its acquisition's answer was
  // lost, only if it was applied (level_release). (`--all` is every level of
  // the token, whoever took them; a token another process took: every master.)
  const auto levels = take_levels(keys.name, owner);
  auto answers = ask_each<ReleaseResult>(m_nodes, [&](redis::Client& node, std::size_t i) {
    const bool if_applied = !all && levels && levels->how.at(i) == LevelRelease::if_applied;
    return lock::release(node, keys, mode, owner, all, op_id, if_applied ? levels->op_id : std::string(), retry);
  });
  check_independent(); // (it was sent: one server named twice lost two levels; say so)
  std::vector<Vote> votes;
  bool released_any = false;
  ReleaseResult result;
  ReleaseResult refused;
  for (const auto& answer : answers) {
    votes.push_back(answer.value ? Vote::yes : Vote::unreachable);
    if (answer.value && answer.value->check == OwnerCheck::ok) {
      released_any = true;
      result.remaining = std::max(result.remaining, answer.value->remaining);
    } else if (answer.value && refused.check == OwnerCheck::ok) {
      refused = *answer.value;
    }
  }
  switch (judge_release(tally(votes), released_any)) {
  case ReleaseVerdict::released:
    return result;
  case ReleaseVerdict::not_held:
    return refused;
  default:
    break;
  }
  throw quorum_error(fmt::format("released on {}, answered by {}", released_any ? "some" : "none",
                                 count_phrase(tally(votes).yes)),
                     answers);
}

RenewResult RedlockStore::renew(const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                                redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) {
  auto answers = ask_all<RenewResult>(
      m_nodes, [&](redis::Client& node) { return lock::renew(node, keys, mode, owner, lease, retry, sync); });
  std::vector<Vote> votes;
  RenewResult result;
  RenewResult refused;
  std::vector<std::size_t> emptied; // masters that say "no such lock"
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const auto& answer = answers[i];
    if (!answer.value) {
      votes.push_back(Vote::unreachable);
    } else if (answer.value->check == OwnerCheck::ok) {
      votes.push_back(Vote::yes);
      result.lease =
          result.lease.count() == 0 ? answer.value->lease : std::min(result.lease, answer.value->lease);
    } else {
      votes.push_back(Vote::no);
      refused = *answer.value;
      if (answer.value->check == OwnerCheck::missing) {
        emptied.push_back(i);
      }
    }
  }
  auto tallied = tally(votes);
  switch (judge_renew(tallied)) {
  case RenewVerdict::confirmed:
    // A master that lost the lock (restarted empty) while the majority still
    // holds it gets it back, so one more failure elsewhere does not cost the
    // majority. Never where another owner holds it.
    if (!emptied.empty() && m_holder && m_holder->owner == owner) {
      AcquireRequest again = *m_holder;
      again.keys = keys;      // several names: the lock renewed, not the last one taken
      again.own_token = true; // ours: finding it there means it is granted
      again.wait.reset();
      again.lease = result.lease.count() > 0 ? result.lease : again.lease;
      redis::RetryScope scope{
          redis::RetryPolicy(m_timeouts, redis::RetryPolicy::Mode::renewal), false, std::nullopt, {}};
      fan_out(emptied.size(), [&](std::size_t k) {
        auto i = emptied[k];
        try {
          if (try_acquire(m_nodes[i], again, new_op_id(), scope).acquired) {
            level_is_ours(keys.name, owner, i);
            log::debug("{}: the lock was granted again (the master had lost it)", m_masters[i].display());
          }
        } catch (const std::exception& e) {
          log::debug("{}: granting the lock again: {}", m_masters[i].display(), e.what());
        }
      });
    }
    return result;
  case RenewVerdict::lost:
    refused.detail = fmt::format("gone or another owner's on {}", count_phrase(tallied.no));
    return refused;
  default:
    break;
  }
  throw quorum_error(fmt::format("renewed on {}", count_phrase(tallied.yes)), answers);
}

std::optional<KeyType> RedlockStore::force_unlock(const LockKeys& keys) {
  auto answers = ask_all<std::optional<KeyType>>(
      m_nodes, [&](redis::Client& node) { return lock::force_unlock(node, keys); });
  check_independent();
  std::optional<KeyType> removed;
  for (const auto& answer : answers) {
    if (answer.value && *answer.value && !removed) {
      removed = *answer.value;
    }
  }
  if (!removed && answered(answers) < need()) {
    throw quorum_error(fmt::format("answered by {}", count_phrase(answered(answers))), answers);
  }
  return removed;
}

History RedlockStore::history(const LockKeys& keys, int limit) {
  auto answers =
      ask_all<History>(m_nodes, [&](redis::Client& node) { return read_history(node, keys, limit); });
  check_independent();
  if (answered(answers) < need()) {
    throw quorum_error(fmt::format("answered by {}", count_phrase(answered(answers))), answers);
  }
  std::vector<History> each;
  for (auto& answer : answers) {
    if (answer.value) {
      each.push_back(std::move(*answer.value));
    }
  }
  return merge_majority(each, need(), limit);
}

std::vector<LockState> RedlockStore::inspect(const std::vector<std::string>& names) {
  return combine(names, ask_all<std::vector<LockState>>(
                            m_nodes, [&](redis::Client& node) { return lock::inspect(node, names); }));
}

std::vector<LockState> RedlockStore::combine(const std::vector<std::string>& names,
                                             const std::vector<Answer<std::vector<LockState>>>& answers) {
  check_independent();
  if (answered(answers) < need()) {
    throw quorum_error(fmt::format("answered by {}", count_phrase(answered(answers))), answers);
  }
  std::vector<LockState> states;
  for (std::size_t n = 0; n < names.size(); ++n) {
    LockState combined;
    combined.name = names[n];
    // The owner that holds it on a majority, if one does.
    std::map<std::string, int> holders;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      NodeView view{m_masters[i].display(), nullptr, {}};
      if (answers[i].value) {
        const auto& state = (*answers[i].value)[n];
        view.state = std::make_shared<const LockState>(state);
        if (state.held() && state.owners.size() == 1) {
          ++holders[state.owners.front().first];
        } else if (state.held()) {
          ++holders[""]; // a foreign key, or several owners (a read lock): nobody's majority
        }
      } else {
        std::string_view error = answers[i].error->what();
        std::string prefix = view.url + ": "; // ask_all named the master; the view does too
        view.error = std::string(error.starts_with(prefix) ? error.substr(prefix.size()) : error);
      }
      combined.nodes.push_back(std::move(view));
    }
    for (const auto& [owner, count] : holders) {
      if (count >= need() && !owner.empty()) {
        for (const auto& view : combined.nodes) {
          if (view.state && view.state->held() && view.state->owners.front().first == owner) {
            if (combined.type == KeyType::none) {
              auto nodes = std::move(combined.nodes);
              combined = *view.state;
              combined.nodes = std::move(nodes);
            } else if (view.state->ttl.count() >= 0 && view.state->ttl < combined.ttl) {
              combined.ttl = view.state->ttl; // the shortest lease of the majority
            }
            // The token is the largest counter of the majority (written back to it).
            if (combined.record && view.state->record && view.state->record->fence &&
                (!combined.record->fence || *view.state->record->fence > *combined.record->fence)) {
              combined.record->fence = view.state->record->fence;
            }
          }
        }
        break;
      }
    }
    states.push_back(std::move(combined));
  }
  return states;
}

// The names any master lists, each seen by every master: a master's own
// listing gives its view of the names it found; only a master that lacks some
// names is asked for those (one more request), so when every master holds the
// same locks, listing is one round.
std::vector<LockState> RedlockStore::find_locks(const std::string& pattern) {
  auto answers = ask_all<std::vector<LockState>>(
      m_nodes, [&](redis::Client& node) { return lock::find_locks(node, pattern); });
  std::vector<std::string> names;
  for (const auto& answer : answers) {
    if (answer.value) {
      for (const auto& state : *answer.value) {
        names.push_back(state.name);
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  fan_out(m_nodes.size(), [&](std::size_t i) {
    if (!answers[i].value) {
      return;
    }
    std::map<std::string, LockState> own;
    for (auto& state : *answers[i].value) {
      own.emplace(state.name, std::move(state));
    }
    std::vector<std::string> missing;
    for (const auto& name : names) {
      if (!own.count(name)) {
        missing.push_back(name);
      }
    }
    try {
      auto read = missing.empty() ? std::vector<LockState>() : lock::inspect(m_nodes[i], missing);
      for (auto& state : read) {
        own.insert_or_assign(state.name, std::move(state));
      }
      std::vector<LockState> view;
      for (const auto& name : names) {
        view.push_back(std::move(own.at(name)));
      }
      answers[i].value = std::move(view);
    } catch (const std::exception& e) {
      answers[i].value.reset();
      answers[i].error = node_error(m_nodes[i], e);
    }
  });
  return combine(names, answers);
}

} // namespace

redis::Timeouts per_node_timeouts(redis::Timeouts given, Millis ttl) {
  return given.capped(std::max(Millis(50), ttl / 10));
}

std::unique_ptr<Store> make_redlock(const std::vector<redis::Endpoint>& masters, redis::Timeouts timeouts) {
  return std::make_unique<RedlockStore>(masters, timeouts);
}

} // namespace rlock::lock
