// RPermitExpirableSemaphore layout (layouts.hpp). Being written: until then --limit is refused.
#include <rlock/core/errors.hpp>
#include <rlock/lock/layouts.hpp>

namespace rlock::lock {

AcquireResult permit_try_acquire(redis::Client&, const AcquireRequest&, const std::string&,
                                 const redis::RetryScope&) {
  throw UsageError("--limit is not supported yet");
}
ReleaseResult permit_release(redis::Client&, const LockKeys&, const std::string&, const std::string&,
                             const std::string&) {
  throw UsageError("--limit is not supported yet");
}
RenewResult permit_renew(redis::Client&, const LockKeys&, const std::string&, Millis, redis::RetryPolicy::Mode,
                         const redis::SyncReplicas&) {
  throw UsageError("--limit is not supported yet");
}

} // namespace rlock::lock
