// The one waiter: subscribe to the release channel(s), try again, wait for a
// release, a lease end or the deadline, as WaitPlan decides.

#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/lock/layouts.hpp>
#include <rlock/lock/waiter.hpp>

#include <poll.h>
#include <sys/random.h>

#include <algorithm>

namespace rlock::lock {

namespace {

// A holder with no lease (a foreign key without expiry, a lock caught between
// DEL and re-creation) is checked again after this long.
constexpr Millis k_recheck{1000};
// The terminal display is refreshed this often while waiting (no request is sent for it).
constexpr Millis k_display_every{1000};

// Sleeps until `until`, or throws Interrupted as soon as a signal arrives.
void pause_or_interrupt(SignalFd* signals, TimePoint until) {
  while (Clock::now() < until) {
    pollfd pfd{signals ? signals->fd() : -1, POLLIN, 0};
    if (::poll(&pfd, 1, poll_timeout_ms(until)) > 0) {
      throw_if_interrupted(*signals);
    }
  }
}

// A subscription that waits on a quorum: a release message starts the next
// round once every master listened to has announced it, or this long after
// the first did (WaitPlan).
constexpr Millis k_announce_wait{20};

// A random duration in [low, high].
Millis random_between(Millis low, Millis high) {
  unsigned value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return low + Millis(value % static_cast<unsigned>((high - low).count() + 1));
}

enum class Heard { nothing, released, passed_over, next, head, head_turn, taken, lost, refused };

// How many times a waiter subscribes again after MOVED (the slot moved; the
// client's map is reloaded first) before it stops listening to that node.
constexpr int k_moved_limit = 8;

// A message on a subscription: a release (or any message: the attempt that
// follows finds out); on the plain lock's release channel, '00': a release
// that named a waiter whose turn it is (passed over), on the waiter's own
// 'next': this waiter is next, 'held' or 'head': it is at the head of the
// queue now (it listens on the release and turns channels; 'head': a release
// just gave a turn to another, as '00' says), on the turns channel: a waiter took its turn
// (lua/lib/turns.lua); the confirmation of a SUBSCRIBE sent without awaiting
// it, or the server ending a sharded subscription because the slot moved to
// another node ("sunsubscribe"): then subscribe again there; or an error
// answering the SUBSCRIBE (MOVED: the client's slot map is out of date).
Heard classify(const redis::Reply& message, const LockKeys& keys) {
  if (message.type == redis::Reply::Type::error) {
    return Heard::refused;
  }
  if (message.is_array() && !message.elements.empty() && message.elements[0].type == redis::Reply::Type::string) {
    const auto& kind = message.elements[0].str;
    if (kind == "sunsubscribe") {
      return Heard::lost;
    }
    if (kind == "subscribe" || kind == "ssubscribe") {
      return Heard::nothing;
    }
    if ((kind == "message" || kind == "smessage") && message.elements.size() == 3) {
      const auto& channel = message.elements[1].str;
      const auto& payload = message.elements[2].str;
      if (channel == keys.channel) {
        return payload == "00" ? Heard::passed_over : Heard::released;
      }
      if (channel == turns_channel(keys)) {
        return payload == "taken" ? Heard::taken : Heard::nothing;
      }
      if ((payload == "next" || payload == "head" || payload == "held") && channel.size() > keys.channel.size() &&
          channel.compare(0, keys.channel.size() + 1, keys.channel + ":") == 0) {
        // on the waiter's own channel
        return payload == "next" ? Heard::next : payload == "head" ? Heard::head_turn : Heard::head;
      }
    }
  }
  return Heard::released;
}

// Reads what a readable subscription has: a reply has begun (the rest within
// 100 ms), then whatever is buffered, telling `tell` each message in the
// order it came ('00' then 'taken' is a turn taken; 'taken' then '00', a new
// turn). A broken subscription (server restart, killed client) is closed: the
// holder's lease bounds what a lost message costs.
struct HeardWhat {
  Heard heard = Heard::nothing;
  std::string error; // Heard::refused: the error reply
};

void read_messages(redis::Connection& sub, const LockKeys& keys,
                   const std::function<void(const HeardWhat&)>& tell) {
  bool read = false;
  try {
    redis::Reply message;
    for (auto until = Clock::now() + Millis(100); sub.read(message, until); until = Clock::now()) {
      read = true;
      Heard heard = classify(message, keys);
      if (heard == Heard::refused || heard == Heard::lost) {
        sub.close();
        tell({heard, heard == Heard::refused ? message.str : std::string()});
        return;
      }
      if (heard != Heard::nothing) {
        tell({heard, {}});
      }
      if (!sub.connected() || !sub.has_buffered_reply()) { // (closed by what it heard)
        break;
      }
    }
  } catch (const RedisError& e) {
    log::debug("subscription lost: {}", e.what());
    sub.close();
    tell({Heard::lost, {}});
    return;
  }
  if (!read) {
    tell({Heard::released, {}}); // readable but no whole reply: the attempt that follows finds out
  }
}

using Subscriptions = std::vector<std::optional<redis::Connection>>;

// What close_finished_waits() closes.
Subscriptions& finished_waits() {
  static Subscriptions parked;
  return parked;
}

// Polls the subscriptions (those connected) and the signals until `until`,
// and tells `tell` what was heard on which.
void listen(Subscriptions& subs, const LockKeys& keys, SignalFd* signals, TimePoint until,
            const std::function<void(std::size_t, const HeardWhat&)>& tell) {
  bool buffered = false;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (subs[i] && subs[i]->connected() && subs[i]->has_buffered_reply()) {
      read_messages(*subs[i], keys, [&](const HeardWhat& what) { tell(i, what); });
      buffered = true;
    }
  }
  if (buffered) {
    return; // the caller asks the plan again
  }
  std::vector<pollfd> fds;
  for (auto& sub : subs) {
    fds.push_back({sub && sub->connected() ? sub->fd() : -1, POLLIN, 0});
  }
  fds.push_back({signals ? signals->fd() : -1, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), poll_timeout_ms(until)) <= 0) {
    return; // the time is up, or EINTR: the caller asks the plan again
  }
  if (signals != nullptr && (fds.back().revents & POLLIN)) {
    throw_if_interrupted(*signals);
  }
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (fds[i].fd >= 0 && fds[i].revents != 0) {
      read_messages(*subs[i], keys, [&](const HeardWhat& what) { tell(i, what); });
    }
  }
}

// A plain waiter took the lock on its turn: the other queued waiters leave
// that turn's deadline alone (WaitPlan::taken). Best effort: one that is
// not heard (an ACL, a broken connection) costs their attempts at it.
void say_taken(redis::Client& client, const LockKeys& keys) noexcept {
  try {
    client.publish(turns_channel(keys), "taken");
  } catch (const std::exception& e) {
    log::debug("cannot say the turn was taken: {}", e.what());
  }
}

} // namespace

void close_finished_waits() noexcept {
  finished_waits().clear();
}

void throw_if_interrupted(SignalFd& signals) {
  while (int sig = signals.take()) {
    if (ends_wait(sig)) {
      throw Interrupted(sig);
    }
  }
}

WaitPlan::WaitPlan(std::optional<Millis> wait, TimePoint start, std::size_t subscriptions, Millis announce_wait)
    : m_wait(wait), m_deadline(start + wait.value_or(Millis(0))), m_announce_wait(announce_wait),
      m_subs(subscriptions, Sub::none), m_subscribe_at(subscriptions), m_announced(subscriptions, false) {}

WaitPlan::Next WaitPlan::next(TimePoint now) const {
  bool pending = std::find(m_subs.begin(), m_subs.end(), Sub::none) != m_subs.end();
  bool attempt_due = m_attempt_due || (m_fresh && !pending);
  if (!attempt_due && (!m_wait || m_answered_at >= m_deadline)) {
    return {Step::give_up, {}}; // no wait, or the last answer came at the deadline
  }
  if (now >= m_keep_at) {
    return {Step::keep_alive, {}};
  }
  if (m_attempt_due) {
    return {Step::attempt, {}};
  }
  TimePoint retry = TimePoint::max(); // the next try of a failed SUBSCRIBE
  bool listening = false;
  for (std::size_t i = 0; i < m_subs.size(); ++i) {
    switch (m_subs[i]) {
    case Sub::none:
      // At the deadline only a failed SUBSCRIBE gets its last try (its error is then final).
      return now < m_deadline ? Next{Step::subscribe, {}, i} : Next{Step::give_up, {}};
    case Sub::failed:
      if (now >= m_subscribe_at[i]) {
        return {Step::subscribe, {}, i};
      }
      retry = std::min(retry, m_subscribe_at[i]);
      break;
    case Sub::subscribed:
      listening = true;
      break;
    case Sub::not_listened:
      break;
    }
  }
  if (m_fresh) {
    return {Step::attempt, {}}; // closes the race with a release before SUBSCRIBE
  }
  if (retry != TimePoint::max() && !listening) {
    return {Step::wait, std::min(retry, m_keep_at)};
  }
  TimePoint announced_by = m_first_message ? *m_first_message + m_announce_wait : TimePoint::max();
  TimePoint wake = std::min({m_wake, m_turn_at, m_next_at});
  if (now >= wake || now >= announced_by) {
    // the holder's lease ended, a turn given to another was not taken, one
    // last look at the deadline, or released
    return {Step::attempt, {}};
  }
  return {Step::wait, std::min({wake, m_keep_at, retry, announced_by})};
}

void WaitPlan::answered(TimePoint now) {
  m_answered_at = now;
  m_attempt_due = false;
  m_fresh = false;
  m_turn_at = TimePoint::max();
  m_next_at = TimePoint::max();
  m_first_message.reset();
  std::fill(m_announced.begin(), m_announced.end(), false);
}

void WaitPlan::busy(Millis holder_ttl, TimePoint now, Millis retry_after, Millis jitter, bool queued) {
  answered(now);
  m_queued = queued;
  Millis wake = (holder_ttl.count() >= 0 ? holder_ttl + Millis(1) : k_recheck) + jitter;
  if (retry_after.count() > 0) {
    wake = std::min(wake, retry_after);
  }
  m_wake = std::min(m_deadline, now + wake);
}

void WaitPlan::unanswered(TimePoint now, TimePoint retry_at) {
  answered(now);
  m_queued = false;
  m_wake = std::min(m_deadline, retry_at);
}

void WaitPlan::subscribed(std::size_t index) {
  m_subs.at(index) = Sub::subscribed;
  m_fresh = true;
}

void WaitPlan::subscription_lost(std::size_t index) {
  m_subs.at(index) = Sub::none;
  m_announced.at(index) = false;
}

void WaitPlan::subscribe_failed(TimePoint retry_at, std::size_t index) {
  m_subs.at(index) = Sub::failed;
  m_subscribe_at.at(index) = std::min(retry_at, m_deadline);
}

void WaitPlan::not_listened(std::size_t index) {
  m_subs.at(index) = Sub::not_listened;
}

void WaitPlan::released(std::size_t index, TimePoint now) {
  if (m_announce_wait.count() <= 0 || m_subs.size() <= 1) {
    m_attempt_due = true;
    return;
  }
  m_announced.at(index) = true;
  m_first_message = m_first_message.value_or(now);
  for (std::size_t i = 0; i < m_subs.size(); ++i) {
    if (m_subs[i] == Sub::subscribed && !m_announced[i]) {
      return;
    }
  }
  m_attempt_due = true;
}

void WaitPlan::passed_over(std::size_t index, TimePoint now, Millis jitter) {
  if (!m_queued) {
    released(index, now);
    return;
  }
  m_turn_at = std::min({m_turn_at, now + k_turn_deadline + jitter, m_deadline});
}

void WaitPlan::next_in_line(TimePoint now) {
  m_next_at = std::min({m_next_at, now + k_turn_grace, m_deadline});
}

void WaitPlan::taken() {
  m_turn_at = TimePoint::max();
}

void WaitPlan::keep_alive(TimePoint due, Millis every) {
  m_keep_at = due;
  m_keep_every = every;
}

void WaitPlan::kept_alive(TimePoint sent) {
  m_keep_at = sent + m_keep_every;
}

std::string turns_channel(const LockKeys& keys) {
  return keys.channel + ":rlock:turns";
}

bool waiting_cannot_end(Mode mode, const Holder& holder) {
  return mode != Mode::limit && holder.layout == Layout::semaphore;
}

std::vector<std::string> wait_channels(const AcquireRequest& request, bool own, bool across, bool behind) {
  const auto& keys = request.keys;
  std::vector<std::string> out;
  switch (request.mode.mode) {
  case Mode::fair:
    out = {keys.channel + ":" + request.owner, keys.channel};
    break;
  case Mode::read:
  case Mode::write:
    out = {keys.rw_channel};
    break;
  case Mode::limit:
    out = {keys.permit_channel};
    break;
  case Mode::exclusive:
    if (own && behind) {
      out = {keys.channel + ":" + request.owner};
    } else {
      out = {keys.channel};
      if (own) {
        out.push_back(keys.channel + ":" + request.owner);
        out.push_back(turns_channel(keys));
      }
    }
    break;
  }
  if (across) {
    for (const auto* other : {&keys.channel, &keys.rw_channel}) {
      if (other == &keys.channel && own && behind) {
        continue; // the head of the queue hears it
      }
      if (std::find(out.begin(), out.end(), *other) == out.end()) {
        out.push_back(*other);
      }
    }
  }
  return out;
}

void leave_queue(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner) noexcept {
  if (mode == Mode::fair) {
    fair_leave(client, keys, owner);
  } else if (mode == Mode::write) {
    rw_leave(client, keys, owner);
  } else if (mode == Mode::exclusive) {
    turn_leave(client, keys, owner);
  }
}

AcquireResult acquire(redis::Client& client, const AcquireRequest& request, SignalFd* signals,
                      const BusyCallback& on_busy, const KeepAlive& keep_alive) {
  // A fair waiter, a writer, or a plain one queued for its turn, that gives
  // up (deadline, signal, Redis error) withdraws its place at once.
  bool queued = false; // an attempt queued this plain waiter for its turn
  auto leave = [&] {
    if (request.mode.mode != Mode::exclusive || queued) {
      leave_queue(client, request.keys, request.mode.mode, request.owner);
    }
  };
  WaitOn on{{&client},
            [&](const redis::RetryScope& scope, const std::optional<Turn>& turn) {
              auto answer = try_acquire(client, request, new_op_id(), scope, turn);
              queued = !answer.acquired && (queued || answer.queued); // taking it takes it out
              return answer;
            },
            false, request.mode.mode == Mode::exclusive};
  if (!request.wait || (request.mode.mode != Mode::fair && request.mode.mode != Mode::write &&
                        request.mode.mode != Mode::exclusive)) {
    return wait_for(on, request, signals, on_busy, keep_alive);
  }
  AcquireResult result;
  try {
    result = wait_for(on, request, signals, on_busy, keep_alive);
  } catch (...) {
    leave();
    throw;
  }
  if (!result.acquired) {
    leave();
  }
  return result;
}

AcquireResult wait_for(const WaitOn& on, const AcquireRequest& request, SignalFd* signals,
                       const BusyCallback& on_busy, const KeepAlive& keep_alive) {
  using redis::RetryPolicy;
  const redis::Timeouts timeouts = on.nodes.front()->timeouts();
  const RetryPolicy policy(timeouts, request.wait ? RetryPolicy::Mode::waiter : RetryPolicy::Mode::one_shot);
  const std::size_t n = on.nodes.size();
  WaitPlan plan(request.wait, Clock::now(), n, on.quorum ? k_announce_wait : Millis(0));
  if (keep_alive && request.wait) {
    plan.keep_alive(keep_alive.due, keep_alive.every);
  }
  redis::RetryScope scope{policy, !request.own_token, plan.deadline(),
                          [signals](TimePoint until) { pause_or_interrupt(signals, until); }};
  const bool turns = on.turns && !on.quorum && request.wait.has_value();
  // What to listen on, as the last busy answer says: a plain waiter queued
  // for its turn hears its own channel and the turns channel besides the
  // release channel. The other layouts' release channels too, unless a
  // SUBSCRIBE to them was refused (an ACL with the mode's channels only).
  // A waiter queued behind the head of the queue hears its own channel only,
  // until a release tells it 'head' there (or an attempt finds it at the
  // head): then the release and turns channels too, for the rest of the wait.
  bool across = true;
  bool at_head = false; // told 'head'
  auto channels_after = [&](const AcquireResult& busy) {
    return wait_channels(request, turns && busy.queued, across, busy.behind && !at_head);
  };
  auto channels = channels_after(AcquireResult{});
  std::vector<std::vector<std::string>> listening(n); // each subscription's channels
  std::vector<bool> sharded(n, false);          // each made with SSUBSCRIBE
  Subscriptions subs(n);                        // each made at its subscription
  // Subscription i listens on `channels` from now on, when they are more than
  // it hears: the others are subscribed to on the same connection (their
  // confirmations are read as they come), without the attempt that follows a
  // new subscription (a queued waiter kept hearing its own channel, where its
  // turn comes). False when the channels are not a superset (then the caller
  // subscribes anew).
  auto listen_also = [&](std::size_t i) {
    const auto& have = listening[i];
    if (!subs[i] || !subs[i]->connected() || have == channels ||
        !std::all_of(have.begin(), have.end(),
                     [&](const auto& c) { return std::find(channels.begin(), channels.end(), c) != channels.end(); })) {
      return have == channels;
    }
    std::vector<std::string> subscribe{sharded[i] ? "SSUBSCRIBE" : "SUBSCRIBE"};
    for (const auto& c : channels) {
      if (std::find(have.begin(), have.end(), c) == have.end()) {
        subscribe.push_back(c);
      }
    }
    try {
      subs[i]->send(subscribe);
    } catch (const RedisError& e) {
      log::debug("subscription lost: {}", e.what());
      subs[i]->close();
      return false;
    }
    listening[i] = channels;
    return true;
  };
  std::vector<redis::SendHistory> sub_history(n); // failed SUBSCRIBEs since the last good one
  for (auto& history : sub_history) {
    history.reached = true; // subscribing comes after a busy answer
  }
  std::vector<int> moved(n, 0); // SUBSCRIBEs answered MOVED
  AcquireResult result;         // the last attempt's answer
  // What a subscription heard, told to the plan. A SUBSCRIBE refused with
  // MOVED or ASK (the slot moved and the client's map has not seen it yet):
  // subscribe again where the reloaded map says; any other refusal (an ACL
  // without the channel): that node is not listened to, the lease end wakes.
  auto tell = [&](std::size_t i, const HeardWhat& what) {
    switch (what.heard) {
    case Heard::released:
      plan.released(i, Clock::now());
      break;
    case Heard::passed_over:
      plan.passed_over(i, Clock::now(), random_between(Millis(0), k_turn_jitter));
      break;
    case Heard::next:
      plan.next_in_line(Clock::now());
      break;
    case Heard::head:
    case Heard::head_turn:
      if (!at_head) {
        at_head = true;
        channels = channels_after(result);
        if (!listen_also(i) && subs[i]) {
          subs[i]->close();
          plan.subscription_lost(i);
        }
      }
      if (what.heard == Heard::head_turn) {
        // The release's '00' came before this waiter listened for it.
        plan.passed_over(i, Clock::now(), random_between(Millis(0), k_turn_jitter));
      }
      break;
    case Heard::taken:
      plan.taken();
      break;
    case Heard::lost:
      plan.subscription_lost(i);
      break;
    case Heard::refused: {
      auto kind = error_from_reply(what.error).kind();
      if ((kind == RedisErrorKind::moved || kind == RedisErrorKind::ask) && ++moved[i] <= k_moved_limit) {
        on.nodes[i]->slot_map_stale();
        plan.subscription_lost(i);
      } else if (across && channels != wait_channels(request, turns && result.queued, false, result.behind && !at_head)) {
        // Refused with the other layouts' channels (an ACL with this mode's
        // only): this mode's own, then.
        log::debug("{}: SUBSCRIBE refused: {}; listening on this mode's channels only",
                   on.nodes[i]->describe(), printable(what.error));
        across = false;
        channels = channels_after(result);
        plan.subscription_lost(i);
      } else {
        log::debug("{}: SUBSCRIBE refused: {}", on.nodes[i]->describe(), printable(what.error));
        plan.not_listened(i);
      }
      break;
    }
    case Heard::nothing:
      break;
    }
  };
  std::optional<RedisError> failed; // the last attempt's error, when it is waited out (quorum)
  TimePoint answered_at = Clock::now();
  TimePoint next_display = answered_at;
  int unsynced_tries = 0; // attempts a replica did not confirm (issue 24)
  // Bounded: each step either ends the loop, or moves the plan towards its
  // deadline (a wait, a pause inside a retry) or makes an attempt after a
  // subscription or a release message.
  for (;;) {
    TimePoint now = Clock::now();
    auto next = plan.next(now);
    switch (next.step) {
    case WaitPlan::Step::give_up:
      if (failed) {
        throw *failed;
      }
      return result;
    case WaitPlan::Step::keep_alive: {
      TimePoint sent = Clock::now();
      keep_alive.renew(); // throws when one of them is not ours any more
      plan.kept_alive(sent);
      break;
    }
    case WaitPlan::Step::attempt:
      try {
        std::optional<Turn> turn;
        if (turns) {
          turn = Turn{std::chrono::duration_cast<Millis>(plan.deadline() - Clock::now()), plan.queued()};
        }
        auto answer = on.attempt(scope, turn);
        failed.reset();
        result = std::move(answer);
      } catch (const RedisError& e) {
        if (e.kind() == RedisErrorKind::unsynced && request.wait) {
          // No replica confirmed it (it was undone): a waiter tries again within
          // its -w, after RetryPolicy's pause (the plan still has the attempt due).
          const TimePoint retry_at = Clock::now() + redis::RetryPolicy::pause_after(++unsynced_tries);
          if (retry_at >= plan.deadline()) {
            throw;
          }
          log::debug("{}; trying again", e.what());
          pause_or_interrupt(signals, retry_at);
          break;
        }
        if (!on.quorum || e.kind() != RedisErrorKind::quorum) {
          throw; // denied, or a broken server: waiting cannot help
        }
        // Too few masters answered: again after a short random delay (Redlock's retry).
        failed = e;
        plan.unanswered(Clock::now(), Clock::now() + random_between(Millis(50), Millis(250)));
        scope.reached = true;
        break;
      }
      if (result.acquired) {
        for (auto& sub : subs) {
          if (sub && sub->connected()) {
            finished_waits().push_back(std::move(sub));
          }
        }
        if (turns && plan.queued()) {
          say_taken(*on.nodes.front(), request.keys);
        }
        return result;
      }
      if (request.wait && waiting_cannot_end(request.mode.mode, result.holder)) {
        return result; // said at once: no release ends it
      }
      answered_at = Clock::now();
      plan.busy(result.holder.ttl, answered_at, result.retry_after,
                on.quorum ? random_between(Millis(0), Millis(49)) : Millis(0), result.queued);
      scope.reached = true;
      channels = channels_after(result);
      for (std::size_t i = 0; i < n; ++i) {
        if (subs[i] && subs[i]->connected() && !listen_also(i)) {
          // The holder changed (say, Redisson's took it): listen anew, then look again.
          subs[i]->close();
          plan.subscription_lost(i);
        }
      }
      break;
    case WaitPlan::Step::subscribe: {
      const auto i = next.index;
      std::optional<redis::Endpoint> tried; // the node the SUBSCRIBE went to
      try {
        auto where = on.nodes[i]->subscription_for(channels.front());
        tried = where.node;
        subs[i].emplace(where.node, timeouts);
        std::vector<std::string> subscribe{where.sharded ? "SSUBSCRIBE" : "SUBSCRIBE"};
        subscribe.insert(subscribe.end(), channels.begin(), channels.end());
        subs[i]->send(subscribe);
        if (!on.quorum) {
          redis::Reply confirmation;
          if (!subs[i]->read(confirmation, Clock::now() + subs[i]->timeouts().io)) {
            subs[i]->close();
            throw RedisError(RedisErrorKind::timeout, "no answer to SUBSCRIBE");
          }
          if (classify(confirmation, request.keys) == Heard::refused) {
            tell(i, {Heard::refused, confirmation.str});
            break;
          }
        }
        sub_history[i] = {};
        sub_history[i].reached = true;
        listening[i] = channels;
        sharded[i] = where.sharded;
        plan.subscribed(i);
      } catch (const RedisError& e) {
        if (subs[i]) {
          subs[i]->close();
        }
        if (on.quorum) {
          // Best effort: a master that cannot be subscribed to is not listened to.
          log::debug("cannot subscribe on {}: {}", on.nodes[i]->describe(), e.what());
          plan.not_listened(i);
          break;
        }
        if (tried) {
          // That node is gone (a Cluster's primary killed, Sentinel's
          // master): the next SUBSCRIBE goes where the deployment says now.
          on.nodes[i]->subscription_failed(*tried);
        }
        sub_history[i].failed(e.kind(), now);
        auto decision = policy.decide(e.kind(), sub_history[i], Clock::now(), plan.deadline());
        if (decision.action == RetryPolicy::Action::give_up) {
          throw;
        }
        log::debug("waiting for Redis: {}", e.what());
        plan.subscribe_failed(Clock::now() + decision.pause, i);
      }
      break;
    }
    case WaitPlan::Step::wait: {
      const bool display = on_busy && !failed;
      if (display && now >= next_display) {
        Holder shown = result.holder;
        auto elapsed = std::chrono::duration_cast<Millis>(now - answered_at);
        if (shown.ttl.count() >= 0) {
          shown.ttl = std::max(Millis(0), shown.ttl - elapsed);
        }
        on_busy(shown, std::chrono::duration_cast<Millis>(plan.deadline() - now));
        next_display = now + k_display_every;
      }
      listen(subs, request.keys, signals, display ? std::min(next.until, next_display) : next.until, tell);
      break;
    }
    }
  }
}

} // namespace rlock::lock
