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
  } else if (votes.no > votes.nodes() - need) {
    verdict.kind = AcquireVerdict::Kind::busy; // even every other node could not make a majority
  } else {
    verdict.kind = AcquireVerdict::Kind::unavailable;
  }
  return verdict;
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
