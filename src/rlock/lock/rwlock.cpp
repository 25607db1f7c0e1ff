// RReadWriteLock layout (layouts.hpp). Being written: until then -s/--write are refused.
#include <rlock/core/errors.hpp>
#include <rlock/lock/layouts.hpp>

namespace rlock::lock {

AcquireResult rw_try_acquire(redis::Client&, const AcquireRequest&, const std::string&, const redis::RetryScope&) {
  throw UsageError("-s/--write are not supported yet");
}
ReleaseResult rw_release(redis::Client&, const LockKeys&, Mode, const std::string&, bool, const std::string&,
                         const std::string&) {
  throw UsageError("-s/--write are not supported yet");
}
void rw_leave(redis::Client&, const LockKeys&, const std::string&) noexcept {}

RenewResult rw_renew(redis::Client&, const LockKeys&, Mode, const std::string&, Millis, redis::RetryPolicy::Mode,
                     const redis::SyncReplicas&) {
  throw UsageError("-s/--write are not supported yet");
}

} // namespace rlock::lock
