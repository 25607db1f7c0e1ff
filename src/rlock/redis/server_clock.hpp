#pragma once

// A server's clock as rlock knows it, and the deadline a request carries on it.

#include <rlock/core/clock.hpp>

#include <optional>
#include <string>

namespace rlock::redis {

// What rlock knows of one Redis server's clock (TIME, ms since the epoch), so
// that a change it asks for can carry a deadline the server checks on its own
// clock: "change nothing if you run this after server time D" (issue 34: a
// request that sat in a partition, a paused server or a slow link and arrives
// after rlock gave up must never take effect).
//
// A sample is one answer of TIME: the request left at local (monotonic) time
// `sent`, its reply was read at `received`, and the server said `server_ms`.
// TIME ran somewhere in between, so at any later local time t the server's
// clock reads at least  server_ms + (t - received) - drift  and at most
// server_ms + 1 + (t - sent) + drift  (+1: TIME's microseconds are cut to
// ms), with drift = k_drift_ppm of the time since the sample (the two clocks
// tick at slightly different rates; NTP slews at most 500 ppm).
//
// The deadline of a request whose reply rlock stops waiting for at local time
// `until` is latest_at(until): a request the server runs while rlock still
// waits (any t <= until) sees a clock at most that: never refused. A request
// the server runs after settled_after(deadline) sees a clock of at least
// earliest_at(t) > deadline: always refused. The two are apart by the sample's
// round trip plus the drift allowance (a few ms on a LAN), and rlock does not
// call an unanswered request given up before that (send_with_retries waits).
//
// Without a sample (the first request of a process to a server), the deadline
// is this host's wall clock at `until` plus k_unsynced_margin: a server whose
// clock is ahead by more refuses it (LATE, with its time: rlock learns the
// clock from that and sends it again at once, costing a round trip, never a
// wrong answer); one whose clock is behind accepts a late first request for
// that much longer. A sample rides with that first request (TIME in its round
// trip), so every later one has the server's own clock.
//
// Pure: every function takes the times it needs (unit-tested with made-up ones).
class ServerClock {
public:
  static constexpr long long k_drift_ppm = 1000;            // 0.1%: twice NTP's largest slew
  static constexpr Millis k_unsynced_margin{500};           // see above
  static constexpr Millis k_refresh{1000};                  // a sample older than this: TIME rides again
  struct Sample {
    TimePoint sent;
    TimePoint received;
    long long server_ms = 0;
  };

  // Keeps `sample` when it narrows what is known now, or when the server's
  // clock is no longer where the kept one says (it was stepped): then the new
  // one replaces it whatever its width.
  void take(const Sample& sample);
  bool known() const { return m_sample.has_value(); }

  // The least and the most the server's clock can read at local time t (ms).
  // Only with known().
  long long earliest_at(TimePoint t) const;
  long long latest_at(TimePoint t) const;

  // The deadline (server ms) of a request whose reply rlock waits for until
  // local time `until`; `wall_until_ms`: this host's wall clock at `until`, used
  // only when no sample is known (see above).
  long long deadline_for(TimePoint until, long long wall_until_ms) const;
  // The local time after which the server surely refuses a request carrying
  // `deadline`: nullopt without a sample (the wall clock's guess is no bound).
  std::optional<TimePoint> settled_after(long long deadline) const;
  // Whether TIME should ride with the next request at local time `now`.
  bool wants_sample(TimePoint now) const;

private:
  long long drift_ms(TimePoint from, TimePoint to) const;
  std::optional<Sample> m_sample;
};

// The process's clocks of every server it talks to, by server_key(): shared by
// every connection and thread (the renewal thread's own connections learn for
// the main thread too). Each call locks briefly; none does I/O.
namespace server_clocks {
void take(const std::string& server, const ServerClock::Sample& sample);
// The deadline for a request to `server` whose reply is awaited until `until`.
long long deadline_for(const std::string& server, TimePoint until);
std::optional<TimePoint> settled_after(const std::string& server, long long deadline);
bool wants_sample(const std::string& server, TimePoint now);
// The server's clock reads at most this at local time t; nullopt when unknown.
std::optional<long long> latest_at(const std::string& server, TimePoint t);
} // namespace server_clocks

} // namespace rlock::redis
