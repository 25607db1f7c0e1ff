#pragma once

namespace rlock::run {

// What `run` does to CMD when the lock is lost (--on-lost).
enum class OnLost { term, kill, ignore };

} // namespace rlock::run
