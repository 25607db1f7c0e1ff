#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>
#include <rlock/lock/waiter.hpp>

#include <poll.h>

#include <algorithm>

namespace rlock::lock {

namespace {

// A holder with no lease (a foreign key without expiry, a lock caught between
// DEL and re-creation) is checked again after this long.
constexpr Millis k_recheck{1000};

// Subscribes `sub` to the release channel and waits for the confirmation.
void subscribe(redis::Connection& sub, const std::string& channel) {
  sub.send({"SUBSCRIBE", channel});
  redis::Reply reply;
  if (!sub.read(reply, Clock::now() + sub.timeouts().io)) {
    sub.close();
    throw RedisError(RedisErrorKind::timeout, "no answer to SUBSCRIBE");
  }
}

constexpr Millis k_retry_pause{250};

// Throws Interrupted for a pending signal that ends a wait (SIGINT, SIGTERM...);
// others in the set (SIGCHLD, SIGCONT) are the caller's business and dropped.
void throw_if_interrupted(SignalFd& signals) {
  while (int sig = signals.take()) {
    for (int ending : k_forwarded_signals) {
      if (sig == ending) {
        throw Interrupted(sig);
      }
    }
  }
}

// Sleeps until `until`, or throws Interrupted as soon as a signal arrives.
void pause_or_interrupt(SignalFd* signals, TimePoint until) {
  while (Clock::now() < until) {
    pollfd pfd{signals ? signals->fd() : -1, POLLIN, 0};
    if (::poll(&pfd, 1, poll_timeout_ms(until)) > 0) {
      throw_if_interrupted(*signals);
    }
  }
}

} // namespace

AcquireResult acquire(redis::Connection& conn, const AcquireRequest& request, SignalFd* signals,
                      const BusyCallback& on_busy) {
  const std::string op_id = new_op_id();
  auto attempt = [&] {
    return try_acquire(conn, request.keys, request.owner, request.lease, op_id, request.info);
  };
  const TimePoint deadline = Clock::now() + request.wait.value_or(Millis(0));
  AcquireResult result;
  for (;;) {
    try {
      result = attempt();
      break;
    } catch (const RedisError& e) {
      // With a wait, an attempt sent but not answered (a paused server, a
      // connection lost mid-request) is retried until the deadline. The retry
      // carries the same op id: if the first one was applied after all, it is
      // not counted twice. A server that cannot be reached at all fails now.
      bool unanswered = e.kind() == RedisErrorKind::timeout || e.kind() == RedisErrorKind::closed;
      if (!request.wait || !unanswered || Clock::now() >= deadline) {
        throw;
      }
      log::debug("retrying the acquisition: {}", e.what());
      pause_or_interrupt(signals, std::min(deadline, Clock::now() + k_retry_pause));
    }
  }
  if (result.acquired || !request.wait) {
    return result;
  }
  redis::Connection sub(conn.endpoint(), conn.timeouts());
  for (;;) {
    if (!sub.connected()) {
      try {
        subscribe(sub, request.keys.channel);
        // A release between our last attempt and the subscription sent no
        // message we could see: try again now that we are listening.
        result = attempt();
      } catch (const RedisError& e) {
        // Redis restarting or briefly unreachable: keep waiting until the
        // deadline, then report the error itself.
        if (e.exit_code() != ExitCode::unavailable || Clock::now() >= deadline) {
          throw;
        }
        log::debug("waiting for Redis: {}", e.what());
        sub.close();
        pause_or_interrupt(signals, std::min(deadline, Clock::now() + k_retry_pause));
        continue;
      }
      if (result.acquired) {
        return result;
      }
    }
    auto now = Clock::now();
    if (now >= deadline) {
      return result;
    }
    Millis ttl = result.holder.ttl;
    const TimePoint attempted = now;
    TimePoint wake = std::min(deadline, now + (ttl.count() >= 0 ? ttl + Millis(1) : k_recheck));
    bool retry = false;
    TimePoint next_display = now;
    while (!retry && Clock::now() < wake) {
      if (on_busy && Clock::now() >= next_display) {
        // Refresh the terminal line once a second; no request is sent for it.
        Holder shown = result.holder;
        auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - attempted);
        if (shown.ttl.count() >= 0) {
          shown.ttl = std::max(Millis(0), shown.ttl - elapsed);
        }
        on_busy(shown, std::chrono::duration_cast<Millis>(deadline - Clock::now()));
        next_display = Clock::now() + Millis(1000);
      }
      TimePoint poll_until = on_busy ? std::min(wake, next_display) : wake;
      if (redis::Reply message; sub.has_buffered_reply() && sub.read(message, Clock::now())) {
        retry = true;
        break;
      }
      pollfd fds[2] = {{sub.fd(), POLLIN, 0}, {signals ? signals->fd() : -1, POLLIN, 0}};
      int rc = ::poll(fds, 2, poll_timeout_ms(poll_until));
      if (rc < 0) {
        continue; // EINTR
      }
      if (signals != nullptr && (fds[1].revents & POLLIN)) {
        throw_if_interrupted(*signals);
      }
      if (fds[0].revents != 0) {
        redis::Reply message;
        try {
          sub.read(message, Clock::now() + Millis(100));
        } catch (const RedisError& e) {
          // The subscription broke (server restart, killed client): subscribe
          // again; the holder's lease bounds what a lost message costs.
          log::debug("subscription lost: {}", e.what());
          sub.close();
        }
        retry = true;
      }
    }
    if (sub.connected()) {
      try {
        result = attempt();
      } catch (const RedisError& e) {
        if (e.exit_code() != ExitCode::unavailable || Clock::now() >= deadline) {
          throw;
        }
        sub.close(); // subscribe and try again from the top
        continue;
      }
      if (result.acquired) {
        return result;
      }
    }
  }
}

} // namespace rlock::lock
