#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>
#include <rlock/lock/layouts.hpp>
#include <rlock/lock/waiter.hpp>

#include <poll.h>

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

enum class Woken { nothing, released, lost };

// A message on the subscription: a release (or any message: the attempt that
// follows finds out), or the server ending a sharded subscription because the
// slot moved to another node ("sunsubscribe"): then subscribe again there.
Woken classify(const redis::Reply& message) {
  if (message.is_array() && !message.elements.empty() && message.elements[0].type == redis::Reply::Type::string &&
      message.elements[0].str == "sunsubscribe") {
    return Woken::lost;
  }
  return Woken::released;
}

// Polls the subscription (when connected) and the signals until `until`.
Woken wait_for_release(redis::Connection& sub, SignalFd* signals, TimePoint until) {
  if (redis::Reply message; sub.connected() && sub.has_buffered_reply() && sub.read(message, Clock::now())) {
    return classify(message);
  }
  pollfd fds[2] = {{sub.connected() ? sub.fd() : -1, POLLIN, 0}, {signals ? signals->fd() : -1, POLLIN, 0}};
  if (::poll(fds, 2, poll_timeout_ms(until)) <= 0) {
    return Woken::nothing; // the time is up, or EINTR: the caller asks the plan again
  }
  if (signals != nullptr && (fds[1].revents & POLLIN)) {
    throw_if_interrupted(*signals);
  }
  if (fds[0].revents == 0) {
    return Woken::nothing;
  }
  try {
    redis::Reply message;
    if (sub.read(message, Clock::now() + Millis(100)) && classify(message) == Woken::lost) {
      sub.close();
      return Woken::lost;
    }
    return Woken::released;
  } catch (const RedisError& e) {
    // The subscription broke (server restart, killed client): the holder's
    // lease bounds what a lost message costs.
    log::debug("subscription lost: {}", e.what());
    sub.close();
    return Woken::lost;
  }
}

} // namespace

void throw_if_interrupted(SignalFd& signals) {
  while (int sig = signals.take()) {
    if (ends_wait(sig)) {
      throw Interrupted(sig);
    }
  }
}

WaitPlan::WaitPlan(std::optional<Millis> wait, TimePoint start)
    : m_wait(wait), m_deadline(start + wait.value_or(Millis(0))) {}

WaitPlan::Next WaitPlan::next(TimePoint now) const {
  if (!m_attempt_due && (!m_wait || m_answered_at >= m_deadline)) {
    return {Step::give_up, {}}; // no wait, or the last answer came at the deadline
  }
  if (now >= m_keep_at) {
    return {Step::keep_alive, {}};
  }
  if (m_attempt_due) {
    return {Step::attempt, {}};
  }
  if (!m_subscribed) {
    if (m_subscribe_failed && now < m_subscribe_at) {
      return {Step::wait, std::min(m_subscribe_at, m_keep_at)};
    }
    // At the deadline only a failed SUBSCRIBE gets its last try (its error is then final).
    return now < m_deadline || m_subscribe_failed ? Next{Step::subscribe, {}} : Next{Step::give_up, {}};
  }
  if (now >= m_wake) {
    return {Step::attempt, {}}; // the holder's lease ended, or one last look at the deadline
  }
  return {Step::wait, std::min(m_wake, m_keep_at)};
}

void WaitPlan::busy(Millis holder_ttl, TimePoint now, Millis retry_after) {
  m_answered_at = now;
  m_attempt_due = false;
  Millis wake = holder_ttl.count() >= 0 ? holder_ttl + Millis(1) : k_recheck;
  if (retry_after.count() > 0) {
    wake = std::min(wake, retry_after);
  }
  m_wake = std::min(m_deadline, now + wake);
}

void WaitPlan::subscribed() {
  m_subscribed = true;
  m_subscribe_failed = false;
  m_attempt_due = true;
}

void WaitPlan::subscription_lost() {
  m_subscribed = false;
}

void WaitPlan::subscribe_failed(TimePoint retry_at) {
  m_subscribed = false;
  m_subscribe_failed = true;
  m_subscribe_at = std::min(retry_at, m_deadline);
}

void WaitPlan::released() {
  m_attempt_due = true;
}

void WaitPlan::keep_alive(TimePoint due, Millis every) {
  m_keep_at = due;
  m_keep_every = every;
}

void WaitPlan::kept_alive(TimePoint sent) {
  m_keep_at = sent + m_keep_every;
}

std::string wait_channel(const AcquireRequest& request) {
  switch (request.mode.mode) {
  case Mode::fair:
    return request.keys.channel + ":" + request.owner;
  case Mode::read:
  case Mode::write:
    return request.keys.rw_channel;
  case Mode::limit:
    return request.keys.permit_channel;
  case Mode::exclusive:
    break;
  }
  return request.keys.channel;
}

namespace {

AcquireResult wait_for_lock(redis::Client& client, const AcquireRequest& request, SignalFd* signals,
                            const BusyCallback& on_busy, const KeepAlive& keep_alive);

} // namespace

AcquireResult acquire(redis::Client& client, const AcquireRequest& request, SignalFd* signals,
                      const BusyCallback& on_busy, const KeepAlive& keep_alive) {
  // A fair waiter, or a writer, that gives up (deadline, signal, Redis error)
  // withdraws its place at once, so it stops holding up those behind it.
  auto leave = [&] {
    if (request.mode.mode == Mode::fair) {
      fair_leave(client, request.keys, request.owner);
    } else if (request.mode.mode == Mode::write) {
      rw_leave(client, request.keys, request.owner);
    }
  };
  if (!request.wait || (request.mode.mode != Mode::fair && request.mode.mode != Mode::write)) {
    return wait_for_lock(client, request, signals, on_busy, keep_alive);
  }
  AcquireResult result;
  try {
    result = wait_for_lock(client, request, signals, on_busy, keep_alive);
  } catch (...) {
    leave();
    throw;
  }
  if (!result.acquired) {
    leave();
  }
  return result;
}

namespace {

AcquireResult wait_for_lock(redis::Client& client, const AcquireRequest& request, SignalFd* signals,
                            const BusyCallback& on_busy, const KeepAlive& keep_alive) {
  using redis::RetryPolicy;
  const RetryPolicy policy(client.timeouts(),
                           request.wait ? RetryPolicy::Mode::waiter : RetryPolicy::Mode::one_shot);
  WaitPlan plan(request.wait, Clock::now());
  if (keep_alive && request.wait) {
    plan.keep_alive(keep_alive.due, keep_alive.every);
  }
  redis::RetryScope scope{policy, !request.own_token, plan.deadline(),
                          [signals](TimePoint until) { pause_or_interrupt(signals, until); }};
  redis::Connection sub(client.target(), client.timeouts()); // replaced at each subscription
  redis::SendHistory sub_history; // failed SUBSCRIBEs since the last good one
  sub_history.reached = true;     // subscribing comes after a busy answer
  AcquireResult result;
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
      return result;
    case WaitPlan::Step::keep_alive: {
      TimePoint sent = Clock::now();
      keep_alive.renew(); // throws when one of them is not ours any more
      plan.kept_alive(sent);
      break;
    }
    case WaitPlan::Step::attempt:
      try {
        result = try_acquire(client, request, new_op_id(), scope);
      } catch (const RedisError& e) {
        // No replica confirmed it (it was undone): a waiter tries again within
        // its -w, after RetryPolicy's pause (the plan still has the attempt due).
        const TimePoint retry_at = Clock::now() + redis::RetryPolicy::pause_after(++unsynced_tries);
        if (e.kind() != RedisErrorKind::unsynced || !request.wait || retry_at >= plan.deadline()) {
          throw;
        }
        log::debug("{}; trying again", e.what());
        pause_or_interrupt(signals, retry_at);
        break;
      }
      if (result.acquired) {
        return result;
      }
      answered_at = Clock::now();
      plan.busy(result.holder.ttl, answered_at, result.retry_after);
      scope.reached = true;
      break;
    case WaitPlan::Step::subscribe:
      try {
        const auto channel = wait_channel(request);
        auto where = client.subscription_for(channel);
        sub = redis::Connection(where.node, client.timeouts());
        sub.send({where.sharded ? "SSUBSCRIBE" : "SUBSCRIBE", channel});
        redis::Reply confirmation;
        if (!sub.read(confirmation, Clock::now() + sub.timeouts().io)) {
          sub.close();
          throw RedisError(RedisErrorKind::timeout, "no answer to SUBSCRIBE");
        }
        sub_history = {};
        sub_history.reached = true;
        plan.subscribed();
      } catch (const RedisError& e) {
        sub.close();
        sub_history.failed(e.kind(), now);
        auto decision = policy.decide(e.kind(), sub_history, Clock::now(), plan.deadline());
        if (decision.action == RetryPolicy::Action::give_up) {
          throw;
        }
        log::debug("waiting for Redis: {}", e.what());
        plan.subscribe_failed(Clock::now() + decision.pause);
      }
      break;
    case WaitPlan::Step::wait: {
      if (on_busy && now >= next_display) {
        Holder shown = result.holder;
        auto elapsed = std::chrono::duration_cast<Millis>(now - answered_at);
        if (shown.ttl.count() >= 0) {
          shown.ttl = std::max(Millis(0), shown.ttl - elapsed);
        }
        on_busy(shown, std::chrono::duration_cast<Millis>(plan.deadline() - now));
        next_display = now + k_display_every;
      }
      TimePoint until = on_busy ? std::min(next.until, next_display) : next.until;
      switch (wait_for_release(sub, signals, until)) {
      case Woken::released:
        plan.released();
        break;
      case Woken::lost:
        plan.subscription_lost();
        break;
      case Woken::nothing:
        break; // the plan looks at the time
      }
      break;
    }
    }
  }
}

} // namespace

} // namespace rlock::lock
