#pragma once

// Whether a request is sent again: what a failure says about it, and the policy.

#include <rlock/core/clock.hpp>
#include <rlock/redis/connection.hpp>
#include <rlock/redis/errors.hpp>

#include <functional>
#include <optional>

namespace rlock::redis {

// What a failed request tells about whether the server applied it.
enum class Outcome {
  not_sent,    // connect failed: nothing reached the server
  unknown,     // timeout, closed, io: it may have been applied, or may still be
  not_applied, // LOADING, BUSY, TRYAGAIN/CLUSTERDOWN, LATE: refused as a whole; resending is safe
  final,       // auth, protocol, script, OOM, READONLY, MOVED/ASK...: resending cannot help
};
Outcome outcome_of(RedisErrorKind kind);

// The history of one request (one op id) up to its latest failure.
struct SendHistory {
  std::optional<TimePoint> first_sent; // first time it may have reached the server
  int tries = 0;                       // sends tried, failed ones included
  int unanswered = 0;                  // sends whose outcome is unknown
  // True when the command has had an answer from the server before this
  // request (a waiter after its first busy answer).
  bool reached = false;
  // True when a resend is safe only while the request's latch key lives (release,
  // force-unlock, acquire with a given owner); false when the request is safe to
  // repeat at any time (renew, inspect, acquire with this process's own token).
  bool latched = false;
  // True when the deployment decides at each try where the request goes, and
  // a node that failed is asked about again (Client::reroutes: a Cluster, Sentinel).
  bool reroutes = false;
  int refused = 0; // tries that could not connect (not_sent)

  // Notes a failed try that started at `started`.
  void failed(RedisErrorKind kind, TimePoint started);
};

// The one retry policy of rlock. Pure: every decision is a function of the error
// kind, the request's history, now and an optional deadline (unit-tested with
// made-up times).
//
//   not_sent     one-shot: give up at once; waiter: pause, then resend, until its deadline,
//                once it has reached the server (a waiter that never reached it, e.g. a
//                wrong URL or a server that is down, fails at once: 69, not a wait).
//                Where the deployment reroutes (history.reroutes: a Cluster's slot
//                map, Sentinel's primary, asked again once a node fails), the first
//                refusal is resent at once, one-shot and waiter alike: the node may
//                have failed over (run's release after a crash failover, issue 33)
//   unknown      resend now with the SAME op id on a fresh connection: one-shot once,
//                a waiter until its deadline; a latched request only while
//                now + request_span() <= first_sent + resend_window()
//   not_applied  pause, then resend, until the deadline (one-shot: first_sent + request_span())
//   final        give up
//   (renewal mode gives up at once: the renewal thread's loop is the retry)
//
// The figures (connect C, I/O timeout T; defaults 2s, 2s):
//   request_span()   = C + 2T  (6s): the longest one try can take (connect, AUTH/SELECT,
//                                   the request itself)
//   resend_window()  = 2 × span (12s): every resend the policy allows ends by then,
//                                   counted from the first send
//   latch_lifetime() = 2 × window (24s): a latch outlives every allowed resend by a
//                                   window's worth of slack for a server that applies
//                                   a queued request late
class RetryPolicy {
public:
  enum class Mode {
    one_shot, // a command that answers once (release, renew, status, acquire -n)
    waiter,   // acquire -w: keeps trying until its deadline
    renewal,  // the renewal thread: never resends here; its own loop tries again
              // after renewal_backoff(), until the supervisor's deadline
    once,     // one try, never resent: run's release after its lease was lost
              // (the lock is likely not ours; the run must end)
  };
  enum class Action { resend_now, resend_after_pause, give_up };
  struct Decision {
    Action action = Action::give_up;
    Millis pause{0}; // for resend_after_pause
  };

  RetryPolicy(Timeouts timeouts, Mode mode);

  // What to do after the latest failure (`kind`, already noted in `history`).
  Decision decide(RedisErrorKind kind, const SendHistory& history, TimePoint now,
                  std::optional<TimePoint> deadline) const;

  Millis request_span() const;
  Millis resend_window() const;
  // How long a latch key lives (PX): passed to the scripts as ARGV.
  Millis latch_lifetime() const;
  // Pause before the next try after `tries` failed ones: 100ms doubling to 1s.
  static Millis pause_after(int tries);
  // Pause of the renewal thread after `failures` failed renewals in a row (>= 1):
  // 100ms doubling, at most half the renewal interval (and never below 100ms).
  static Millis renewal_backoff(int failures, Millis interval);
  // The longest connect and I/O timeout of the renewal thread's requests: one
  // renewal interval (an answer later than that is late for the next renewal
  // anyway). It bounds how long the end of a run waits for a renewal in flight.
  static Millis renewal_timeout_cap(Millis interval);
  // The longest connect and I/O timeout for one try (connect, AUTH/HELLO, the
  // request: request_span()) to end within `budget` (at least 1ms each).
  static Millis timeout_cap_within(Millis budget);

private:
  Timeouts m_timeouts;
  Mode m_mode;
};

// How a request is resent: the policy, whether it is latched, the deadline (a
// waiter's), how to pause (a waiter's pause is interruptible by signals;
// default: sleep) and whether the command reached the server before.
struct RetryScope {
  RetryPolicy policy;
  bool latched = false;
  std::optional<TimePoint> deadline;
  std::function<void(TimePoint until)> pause;
  bool reached = false;
  // Asked after a failed try: does the deployment reroute (SendHistory::reroutes)?
  std::function<bool()> reroutes = nullptr;
};

// Runs `send` (one try of one request, the same bytes each time) until it
// returns, resending as scope.policy decides. When the policy gives up it
// throws the last error; if an earlier try got no answer, the error thrown has
// that try's kind (timeout, closed, io: outcome unknown), so callers can tell
// the request may have been applied. Before it gives up on a request whose
// unanswered sends all carried a deadline (RedisError::settles_at), it waits
// until none of them can take effect any more (a few ms), and says so.
Reply send_with_retries(const RetryScope& scope, const std::function<Reply()>& send);

} // namespace rlock::redis
