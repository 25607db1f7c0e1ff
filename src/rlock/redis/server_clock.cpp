// Each server's clock as its TIME answers bound it, and the deadline a
// script request carries on it (pure, with the process-wide map by server).

#include <rlock/redis/server_clock.hpp>

#include <chrono>
#include <map>
#include <mutex>

namespace rlock::redis {

namespace {

long long clock_ms_between(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<Millis>(to - from).count();
}

// Rounded up: a bound that errs only on the safe side.
long long clock_ms_ceil_between(TimePoint from, TimePoint to) {
  return std::chrono::ceil<Millis>(to - from).count();
}

} // namespace

long long ServerClock::drift_ms(TimePoint from, TimePoint to) const {
  long long span = std::max(0LL, clock_ms_ceil_between(from, to));
  return (span * k_drift_ppm + 999'999) / 1'000'000;
}

long long ServerClock::earliest_at(TimePoint t) const {
  const auto& s = *m_sample;
  // floor of (t - received): the server's clock has advanced at least that much.
  return s.server_ms + clock_ms_between(s.received, t) - (t > s.received ? drift_ms(s.received, t) : 0);
}

long long ServerClock::latest_at(TimePoint t) const {
  const auto& s = *m_sample;
  return s.server_ms + 1 + clock_ms_ceil_between(s.sent, t) + (t > s.sent ? drift_ms(s.sent, t) : 0);
}

void ServerClock::take(const Sample& sample) {
  if (!m_sample) {
    m_sample = sample;
    return;
  }
  // The server's clock is not where the kept sample says: stepped (an
  // operator, a VM restored): believe the new one.
  if (sample.server_ms < earliest_at(sample.sent) - 1 || sample.server_ms > latest_at(sample.received)) {
    m_sample = sample;
    return;
  }
  // Else keep the narrower at the new sample's time.
  long long kept = latest_at(sample.received) - earliest_at(sample.received);
  long long fresh = clock_ms_ceil_between(sample.sent, sample.received) + 1;
  if (fresh <= kept) {
    m_sample = sample;
  }
}

long long ServerClock::deadline_for(TimePoint until, long long wall_until_ms) const {
  if (!m_sample) {
    return wall_until_ms + k_unsynced_margin.count();
  }
  return latest_at(until);
}

std::optional<TimePoint> ServerClock::settled_after(long long deadline) const {
  if (!m_sample) {
    return std::nullopt;
  }
  const auto& s = *m_sample;
  // earliest_at(t) > deadline once t - received, less its drift, exceeds
  // deadline - server_ms: solve with the drift taken at its rate, plus 1 ms.
  long long need = std::max(0LL, deadline - s.server_ms + 1);
  long long span = need + (need * k_drift_ppm + 999'999) / (1'000'000 - k_drift_ppm) + 1;
  return s.received + Millis(span);
}

bool ServerClock::wants_sample(TimePoint now) const {
  return !m_sample || now - m_sample->received > k_refresh;
}

namespace server_clocks {

namespace {

std::mutex& clocks_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, ServerClock>& clocks() {
  static std::map<std::string, ServerClock> map;
  return map;
}

long long wall_ms_at(TimePoint until) {
  auto wall = std::chrono::system_clock::now() + (until - Clock::now());
  return std::chrono::ceil<Millis>(wall.time_since_epoch()).count();
}

} // namespace

void take(const std::string& server, const ServerClock::Sample& sample) {
  std::lock_guard lock(clocks_mutex());
  clocks()[server].take(sample);
}

long long deadline_for(const std::string& server, TimePoint until) {
  long long wall = wall_ms_at(until);
  std::lock_guard lock(clocks_mutex());
  return clocks()[server].deadline_for(until, wall);
}

std::optional<TimePoint> settled_after(const std::string& server, long long deadline) {
  std::lock_guard lock(clocks_mutex());
  return clocks()[server].settled_after(deadline);
}

bool wants_sample(const std::string& server, TimePoint now) {
  std::lock_guard lock(clocks_mutex());
  return clocks()[server].wants_sample(now);
}

std::optional<long long> latest_at(const std::string& server, TimePoint t) {
  std::lock_guard lock(clocks_mutex());
  const auto& clock = clocks()[server];
  if (!clock.known()) {
    return std::nullopt;
  }
  return clock.latest_at(t);
}

} // namespace server_clocks

} // namespace rlock::redis
