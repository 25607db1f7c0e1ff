#include <rlock/core/clock.hpp>
#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/several.hpp>

#include <algorithm>
#include <numeric>

namespace rlock::lock {

std::vector<std::size_t> take_order(const std::vector<LockKeys>& locks) {
  std::vector<std::size_t> order(locks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return locks[a].name < locks[b].name; });
  return order;
}

namespace {

// Releases what acquire_all took (latest first). Never throws: the locks are
// also bounded by their leases.
void undo(Store& store, const std::vector<LockKeys>& locks, const std::vector<std::size_t>& taken,
          const AcquireRequest& request) noexcept {
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    try {
      store.release(locks[*it], request.mode.mode, request.owner, false);
    } catch (const std::exception& e) {
      log::warning("could not release {} (it expires by its lease): {}", quote(locks[*it].name), e.what());
    }
  }
}

} // namespace

Taken acquire_all(Store& store, const AcquireRequest& request, const std::vector<LockKeys>& locks,
                  SignalFd* signals, const NamedBusyCallback& on_busy) {
  Taken taken;
  taken.results.resize(locks.size());
  const TimePoint deadline = Clock::now() + request.wait.value_or(Millis(0));
  std::vector<std::size_t> held;
  try {
    for (auto index : take_order(locks)) {
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
      taken.results[index] = store.acquire(one, signals, named);
      if (!taken.results[index].acquired) {
        taken.busy = index;
        undo(store, locks, held, request);
        return taken;
      }
      held.push_back(index);
    }
  } catch (...) {
    undo(store, locks, held, request);
    throw;
  }
  taken.acquired = true;
  return taken;
}

ReleasedAll release_all(Store& store, const std::vector<LockKeys>& locks, Mode mode, const std::string& owner,
                        bool all) noexcept {
  ReleasedAll out;
  out.results.resize(locks.size());
  out.errors.resize(locks.size());
  auto order = take_order(locks);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    try {
      out.results[*it] = store.release(locks[*it], mode, owner, all);
    } catch (...) {
      out.errors[*it] = std::current_exception();
    }
  }
  return out;
}

} // namespace rlock::lock
