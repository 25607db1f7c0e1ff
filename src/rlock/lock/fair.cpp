// RFairLock layout (layouts.hpp). Being written: until then --fair is refused.
#include <rlock/core/errors.hpp>
#include <rlock/lock/layouts.hpp>

namespace rlock::lock {

AcquireResult fair_try_acquire(redis::Client&, const AcquireRequest&, const std::string&, const redis::RetryScope&,
                               bool) {
  throw UsageError("--fair is not supported yet");
}

void fair_leave(redis::Client&, const LockKeys&, const std::string&) noexcept {}

} // namespace rlock::lock
