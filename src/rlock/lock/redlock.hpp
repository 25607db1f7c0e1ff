#pragma once

// A Redlock quorum over independent masters as a lock::Store, and its
// per-master timeouts.

#include <rlock/lock/store.hpp>

#include <memory>
#include <vector>

namespace rlock::lock {

// Each master's request bound in a Redlock round: well below the lease, so
// that an acquisition keeps most of its validity (TTL/10, at least 50 ms, at
// most the given timeouts).
redis::Timeouts per_node_timeouts(redis::Timeouts given, Millis ttl);

// Redlock over independent masters (see quorum.hpp for the decisions): every
// request goes to all masters at once (a thread and a connection each), and a
// majority decides.
//
//   acquire  held with a majority of grants and validity > 0; the fencing token
//            is the largest granting master's counter, written back to every
//            granting master (fence_raise.lua) before anyone sees it, and
//            confirmed on a majority. Otherwise what it took is released
//            (owner-checked) and it is busy (75) or unavailable (69); with a
//            wait, it tries again on a release message from any master, at the
//            holders' lease end, or after a short random delay.
//   renew    confirmed by a majority; a master that answers "gone" while the
//            majority holds it gets the lock again (it restarted empty);
//            lost when the masters saying "gone / another owner's" leave no
//            majority; otherwise unconfirmed (RedisError quorum).
//   release  on every master; done when a majority answered.
std::unique_ptr<Store> make_redlock(const std::vector<redis::Endpoint>& masters, redis::Timeouts timeouts);

} // namespace rlock::lock
