// Several locks taken all or none in one fixed order (waiting renews those
// taken), released and renewed together.

#include <rlock/core/clock.hpp>
#include <rlock/core/duration.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/lock/several.hpp>
#include <rlock/redis/retry.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

namespace rlock::lock {

std::vector<std::size_t> take_order(const std::vector<LockKeys>& locks) {
  std::vector<std::size_t> order(locks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return locks[a].name < locks[b].name; });
  return order;
}

Millis keep_alive_every(Millis lease) {
  return std::max(Millis(10), lease / 3);
}

namespace {

// Renews `keys` (held by request.owner) for a full lease, confirming it is
// still ours; throws Error(lost) when it is not. `why`: for the message.
void renew_held(Store& store, const LockKeys& keys, const AcquireRequest& request, AcquireResult& taken,
                const std::string& why) {
  TimePoint sent = Clock::now();
  auto renewed = store.renew(keys, request.mode.mode, request.owner, request.lease,
                             redis::RetryPolicy::Mode::one_shot, {});
  if (renewed.check != OwnerCheck::ok) {
    throw Error(Outcome::lost,
                fmt::format("{} was lost {}: {}", quote(keys.name), why,
                            renewed.check == OwnerCheck::missing ? "it is gone (expired or force-unlocked)"
                            : renewed.check == OwnerCheck::other
                                ? "it is now held by " + printable(renewed.detail)
                                : "it is not a lock of this mode any more"));
  }
  taken.sent_at = sent; // the lease now runs from this send at least
  taken.lease = renewed.lease.count() > 0 ? renewed.lease : request.lease;
}

// A lock whose answer came late, renewed before it is used: nothing when it
// is still ours (its lease now runs from the renewal), else why it is not
// used. Throws what the renewal throws when it gets no answer.
std::optional<std::string> renewed_or_late(Store& store, const LockKeys& keys, const AcquireRequest& request,
                                           AcquireResult& taken) {
  try {
    renew_held(store, keys, request, taken, "before it could be used");
  } catch (const RedisError&) {
    throw;
  } catch (const Error& e) {
    if (e.outcome() != Outcome::lost) {
      throw;
    }
    return e.what();
  }
  return std::nullopt;
}

// Releases what acquire_all took (latest first). Never throws: the locks are
// also bounded by their leases.
void undo(Store& store, const std::vector<LockKeys>& locks, const std::vector<std::size_t>& taken,
          const AcquireRequest& request) noexcept {
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    try {
      store.release(locks[*it], request.mode.mode, request.owner, false, redis::RetryPolicy::Mode::one_shot);
    } catch (const std::exception& e) {
      warn_not_released("", locks[*it].name, e);
    }
  }
}

// After a name turned out unavailable: tries the names not tried yet (from
// position `from` of `order`; from the awaited one when keeping the others
// alive failed, not its own attempt) once each, without waiting. Returns the index of
// the first that is busy; what they take goes into `held` (undone by the
// caller). A busy name makes the whole acquisition busy, never "unavailable":
// `run --if-unavailable run` must not start CMD beside a holder it could reach.
std::optional<std::size_t> first_busy(Store& store, const AcquireRequest& request, const std::vector<LockKeys>& locks,
                                      const std::vector<std::size_t>& order, std::size_t from,
                                      std::vector<std::size_t>& held, Taken& taken) noexcept {
  for (std::size_t pos = from; pos < order.size(); ++pos) {
    const auto index = order[pos];
    AcquireRequest one = request;
    one.keys = locks[index];
    one.wait.reset();
    try {
      taken.results[index] = store.acquire(one, nullptr, {}, {});
    } catch (const std::exception& e) {
      log::debug("{} could not be tried either: {}", quote(locks[index].name), e.what());
      continue;
    }
    if (!taken.results[index].acquired) {
      return index;
    }
    held.push_back(index);
  }
  return std::nullopt;
}

} // namespace

Taken acquire_all(Store& store, const AcquireRequest& request, const std::vector<LockKeys>& locks,
                  SignalFd* signals, const NamedBusyCallback& on_busy) {
  Taken taken;
  taken.results.resize(locks.size());
  const TimePoint deadline = Clock::now() + request.wait.value_or(Millis(0));
  std::vector<std::size_t> held;
  const std::string* awaited = nullptr; // the name being waited for
  // Keeping the names taken alive failed (a Redlock renewal no majority
  // confirmed): the wait for the awaited one ended, not because it could not
  // be reached; its last answer was busy (explorer, seed 7103 schedule 51:
  // `run --if-unavailable run C B` ran CMD beside C's holder, whom the one
  // live master still showed).
  bool keep_alive_failed = false;
  KeepAlive keep;
  keep.every = keep_alive_every(request.lease);
  keep.renew = [&] {
    try {
      for (auto index : held) {
        renew_held(store, locks[index], request, taken.results[index],
                   "while waiting for " + quote(*awaited));
      }
    } catch (const RedisError& e) {
      if (redis::outcome_of(e.kind()) == redis::Outcome::final) {
        keep_alive_failed = true;
        throw;
      }
      // Redis unreachable for now: the waiter keeps trying until its deadline
      // (so does this, at the next interval), and once the last is taken, the
      // renewal of those whose lease is stale confirms each is still ours.
      log::debug("cannot renew while waiting for {}: {}", quote(*awaited), e.what());
    }
  };
  const auto order = take_order(locks);
  std::size_t tried = 0; // names of `order` tried so far
  // Why the last round's locks were not used: an answer came too late.
  std::optional<std::string> late;
  // Bounded: each round takes every name again, only while -w has time left.
  for (;; late.reset()) {
    try {
      for (auto index : order) {
        ++tried;
        AcquireRequest one = request;
        one.keys = locks[index];
        if (request.wait) {
          // Each lock waits for what is left of the one deadline (at least one attempt).
          one.wait = std::max(Millis(0), std::chrono::duration_cast<Millis>(deadline - Clock::now()));
        }
        BusyCallback named;
        if (on_busy) {
          named = [&on_busy, &name = locks[index].name](const Holder& holder, Millis left) {
            on_busy(name, holder, left);
          };
        }
        awaited = &locks[index].name;
        keep.due = TimePoint::max();
        for (auto h : held) {
          keep.due = std::min(keep.due, taken.results[h].sent_at + keep.every);
        }
        taken.results[index] = store.acquire(one, signals, named, held.empty() ? KeepAlive{} : keep);
        if (!taken.results[index].acquired) {
          taken.busy = index;
          undo(store, locks, held, request);
          return taken;
        }
        held.push_back(index);
        // Its answer came late (issue 41): renewed before it is used, and not
        // used when it is not ours any more.
        if (lease_is_stale(taken.results[index].sent_at, Clock::now(), request.lease)) {
          late = renewed_or_late(store, locks[index], request, taken.results[index]);
          if (late) {
            break;
          }
        }
      }
      // Every lease full from now: those taken before a wait are renewed once more
      // (and confirmed ours: a lock lost meanwhile fails the whole acquisition).
      const TimePoint last_taken = held.empty() ? Clock::now() : taken.results[held.back()].sent_at;
      for (std::size_t i = 0; !late && i + 1 < held.size(); ++i) {
        if (lease_is_stale(taken.results[held[i]].sent_at, last_taken, request.lease)) {
          renew_held(store, locks[held[i]], request, taken.results[held[i]], "while the others were awaited");
        }
      }
      // Nothing is used on a lease with no more than its margin left.
      for (std::size_t i = 0; !late && i < held.size(); ++i) {
        const auto& result = taken.results[held[i]];
        if (!lease_left_enough(result.sent_at, request.lease, Clock::now())) {
          late = fmt::format("{} had no more than {} of its lease left when its answer came",
                             quote(locks[held[i]].name), format_duration(lease_margin(request.lease)));
        }
      }
      if (late) {
        undo(store, locks, held, request);
        held.clear();
        tried = 0;
        if (request.wait && Clock::now() < deadline) {
          log::debug("taking every name again: {}", *late);
          continue;
        }
        break; // thrown below, out of the try: nothing is held, nothing more to try
      }
    } catch (const RedisError& e) {
      if (acquisition_unavailable(e.kind())) {
        const std::size_t from = keep_alive_failed ? tried - 1 : tried;
        if (auto busy = first_busy(store, request, locks, order, from, held, taken)) {
          if (keep_alive_failed) {
            log::warning("could not keep the names taken alive while waiting for {}: {}", quote(*awaited),
                         e.what());
          }
          taken.busy = *busy;
          undo(store, locks, held, request);
          return taken;
        }
      }
      undo(store, locks, held, request);
      throw;
    } catch (...) {
      undo(store, locks, held, request);
      throw;
    }
    taken.acquired = true;
    return taken;
  }
  // Unavailable as a LATE answer is (69, and what run --if-unavailable acts on):
  // nothing was kept.
  throw RedisError(RedisErrorKind::late, fmt::format("{} (Redis answered too late; nothing is held)", *late));
}

void warn_not_released(std::string_view label, const std::string& name, const std::exception& why) noexcept {
  log::warning("{}{}could not release {} (it expires by its lease): {}", label, label.empty() ? "" : ": ",
               quote(name), why.what());
}

void warn_unreleased(std::string_view label, const std::vector<LockKeys>& locks,
                     const ReleasedAll& released) noexcept {
  for (std::size_t i = 0; i < locks.size() && i < released.errors.size(); ++i) {
    if (released.errors[i]) {
      try {
        std::rethrow_exception(released.errors[i]);
      } catch (const std::exception& e) {
        warn_not_released(label, locks[i].name, e);
      }
    }
  }
}

ReleasedAll release_all(Store& store, const std::vector<LockKeys>& locks, Mode mode, const std::string& owner,
                        bool all, redis::RetryPolicy::Mode retry) noexcept {
  ReleasedAll out;
  out.results.resize(locks.size());
  out.errors.resize(locks.size());
  auto order = take_order(locks);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    try {
      out.results[*it] = store.release(locks[*it], mode, owner, all, retry);
    } catch (...) {
      out.errors[*it] = std::current_exception();
    }
  }
  return out;
}

RenewedAll renew_all(Store& store, const std::vector<LockKeys>& locks, Mode mode, const std::string& owner,
                     Millis lease, redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) noexcept {
  RenewedAll out;
  out.results.resize(locks.size());
  out.errors.resize(locks.size());
  for (std::size_t i = 0; i < locks.size(); ++i) {
    try {
      out.results[i] = store.renew(locks[i], mode, owner, lease, retry, sync);
    } catch (...) {
      out.errors[i] = std::current_exception();
    }
  }
  return out;
}

} // namespace rlock::lock
