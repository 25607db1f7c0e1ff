// Redlock's pure verdicts over the masters' answers: majority, validity,
// what to undo, and what a round of renewals or releases means.

#include <rlock/lock/quorum.hpp>

namespace rlock::lock {

int majority(int nodes) {
  return nodes / 2 + 1;
}

Millis drift_allowance(Millis ttl) {
  return ttl / 100 + Millis(2);
}

Tally tally(const std::vector<Vote>& votes) {
  Tally t;
  for (auto vote : votes) {
    switch (vote) {
    case Vote::yes:
      ++t.yes;
      break;
    case Vote::no:
      ++t.no;
      break;
    case Vote::unreachable:
      ++t.unreachable;
      break;
    }
  }
  return t;
}

AcquireVerdict judge_acquire(const Tally& votes, Millis ttl, Millis elapsed) {
  const int need = majority(votes.nodes());
  AcquireVerdict verdict;
  verdict.validity = ttl - elapsed - drift_allowance(ttl);
  if (votes.yes >= need) {
    verdict.kind =
        verdict.validity > Millis(0) ? AcquireVerdict::Kind::held : AcquireVerdict::Kind::unavailable;
  } else if (votes.no > 0) {
    // Another owner holds it somewhere: it may hold a majority behind the
    // masters that did not answer, so this is busy, never "unavailable" (which
    // `run --if-unavailable` would take as leave to run without the lock).
    verdict.kind = AcquireVerdict::Kind::busy;
  } else {
    verdict.kind = AcquireVerdict::Kind::unavailable;
  }
  return verdict;
}

Undo undo_on(bool granted, std::optional<RedisErrorKind> error) {
  if (granted) {
    return Undo::release;
  }
  if (!error || *error == RedisErrorKind::connect) {
    return Undo::skip; // answered "busy" (took nothing), or never reached
  }
  return *error == RedisErrorKind::timeout ? Undo::send_only : Undo::release;
}

LevelRelease level_release(bool answered, bool own_token) {
  return answered || own_token ? LevelRelease::plain : LevelRelease::if_applied;
}

RenewVerdict judge_renew(const Tally& votes) {
  const int need = majority(votes.nodes());
  if (votes.yes >= need) {
    return RenewVerdict::confirmed;
  }
  if (votes.no > votes.nodes() - need) {
    return RenewVerdict::lost;
  }
  return RenewVerdict::unconfirmed;
}

ReleaseVerdict judge_release(const Tally& votes, bool released_any) {
  if (votes.yes < majority(votes.nodes())) {
    return ReleaseVerdict::unavailable;
  }
  return released_any ? ReleaseVerdict::released : ReleaseVerdict::not_held;
}

} // namespace rlock::lock
