#pragma once

// Where a lease starts and whether enough of it is left to act on: the one
// place for both, pure (unit-tested with made-up times, as LeaseClock is).

#include <rlock/core/clock.hpp>

#include <optional>

namespace rlock::lock {

// The sends of one acquisition request, as detail::run_script saw them.
struct Sends {
  TimePoint called;   // when the caller asked, before finding the node and connecting
  TimePoint answered; // when the send that got the answer went out (TimePoint{}: not known)
  // The earliest earlier send of the same request that got no answer.
  std::optional<TimePoint> earlier_unanswered;
};

// Where a lease of `asked` that a granted acquisition proves starts: a lease
// of that length from this time ends no later than the one on the server.
// Dated from the send that applied it, and nothing before that send
// (discovery, a silent seed, reconnects, a LATE send, an earlier send that was
// not applied) is charged to it. `replayed`: the script answered from an
// earlier send's latch (that send applied it: the earliest that got no
// answer, as one of them did; none known: the call); else the answered send
// applied it, or found it applied by the client's own token, answering the
// lease left then. `answered`: the lease the answer gives; when it is shorter
// than `asked` (the lease left of a hold found), the start moves back by the
// difference. Never otherwise before `called`.
TimePoint lease_start(const Sends& sends, bool replayed, Millis answered, Millis asked);

// The lease rlock keeps in hand for clock-rate differences and the reply's
// trip back: a tenth of it, between 1 ms and 2 s (LeaseClock's margin).
Millis lease_margin(Millis lease);

// Whether a lease of `lease` that started at `start` has more than
// lease_margin(lease) left at `now`: enough to start CMD, print a token or
// report success on.
bool lease_left_enough(TimePoint start, Millis lease, TimePoint now);

// Whether a lock whose current lease began at `lease_start` is renewed once
// more before it is used at `now` (the last of several taken, an answer
// received): when it began more than lease/10 before (a wait came between
// them, or the answer came late), so that every lease of a set starts at
// about the same time and none is used on an old grant.
bool lease_is_stale(TimePoint lease_start, TimePoint now, Millis lease);

} // namespace rlock::lock
