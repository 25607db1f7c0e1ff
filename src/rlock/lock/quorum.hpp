#pragma once

// Redlock's decisions, pure: majority, validity, and the verdicts of a round.

#include <rlock/core/clock.hpp>
#include <rlock/redis/errors.hpp>

#include <optional>
#include <vector>

namespace rlock::lock {

// Redlock's decisions over N independent masters, pure (unit-tested with
// made-up answers and times): what a set of per-node answers means.

// Votes needed out of `nodes`: floor(N/2) + 1.
int majority(int nodes);

// Redlock's allowance for clock-rate differences between the client and the
// masters: 1% of the TTL + 2 ms (as the Redlock description states).
Millis drift_allowance(Millis ttl);

// What one node answered to an acquisition, a renewal or a release.
enum class Vote {
  yes,         // granted / renewed / released (or already gone, for a release)
  no,          // held by another owner (acquire), gone or another owner's (renew)
  unreachable, // no answer in time, or an error: counts for nobody
};

struct Tally {
  int yes = 0;
  int no = 0;
  int unreachable = 0;
  int nodes() const { return yes + no + unreachable; }
};
Tally tally(const std::vector<Vote>& votes);

struct AcquireVerdict {
  enum class Kind {
    held,        // a majority granted, and time is left: validity > 0
    busy,        // not held, and at least one node said another owner holds it: 75
    unavailable, // not held, and no node said "held by another": too few
                 // answered, or a majority granted but too late: 69
  };
  Kind kind = Kind::unavailable;
  Millis validity{0}; // TTL - elapsed - drift allowance (may be <= 0)
};

// The verdict on one acquisition round: `elapsed` from the first send to the
// last answer counted, `ttl` the lease asked for. Any busy answer in a round
// that is not held makes it busy: the masters that did not answer may be the
// ones the holder has (issue 19: a busy master, a paused one and a dead one
// were called "no quorum", and `--if-unavailable run` ran CMD beside the
// holder).
AcquireVerdict judge_acquire(const Tally& votes, Millis ttl, Millis elapsed);

// How a failed acquisition round is undone on one master (its share
// released, all masters at once):
//   release   where it granted, or answered with an error, or the connection
//             broke: the master answers at once;
//   send_only where it gave no answer in time (`timeout`: frozen, or its
//             replies are slow): the release is sent, but its answer is awaited
//             only briefly (k_undo_wait), so the failure does not wait one more
//             io-timeout or two on it (issue 19: 3 of 5 frozen took 3 s with
//             --io-timeout 1s); a slow master applies it at once, a frozen one
//             when it thaws (after the acquisition queued before it), and what
//             it keeps otherwise expires with its lease: the grant failed;
//   skip      where nothing was sent (`connect`) or it answered busy.
enum class Undo { release, send_only, skip };
Undo undo_on(bool granted, std::optional<RedisErrorKind> error);
inline constexpr Millis k_undo_wait{100};

// How a release of one level undoes an acquisition on one master (a failed
// round's undo, or the release of a hold taken: `run`'s end, several names
// given back), from that master's answer to it:
//   plain       the master answered (granted: the level is there; busy: none
//               of ours is, and the owner-checked release changes nothing),
//               or the token is this process's own (nobody else has it:
//               whatever of it is there is ours);
//   if_applied  the answer was lost and the token was given (--owner,
//               RLOCK_OWNER): a level found there may be an older hold's of
//               the same token, so one goes only if that master's latch of
//               the acquisition says it was applied. A request rlock gave up
//               on is refused there (LATE) and leaves no latch: releasing
//               anyway took the older hold's only level on that master, and
//               left it on a minority while its validity ran (a second owner
//               took the name: test_redlock_reentry).
enum class LevelRelease { plain, if_applied };
LevelRelease level_release(bool answered, bool own_token);

// A renewal round: confirmed by a majority (the fail-safe deadline moves, from
// the send time); lost when the nodes that say "gone or another owner's" leave
// no majority possible; otherwise unconfirmed (the deadline stays).
enum class RenewVerdict { confirmed, unconfirmed, lost };
RenewVerdict judge_renew(const Tally& votes);

// A release round (yes: the node answered, and ours is gone from it; no or
// unreachable: it did not answer): done when a majority answered;
// `released_any` says whether any node had it (else: not held, exit 1).
enum class ReleaseVerdict { released, not_held, unavailable };
ReleaseVerdict judge_release(const Tally& votes, bool released_any);

} // namespace rlock::lock
