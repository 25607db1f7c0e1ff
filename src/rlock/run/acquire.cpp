// `run`'s acquisition: the locks, --if-unavailable's decision, --once-per's
// check after them, and the history of a skipped run.

#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/run/acquire.hpp>

#include <fmt/format.h>

namespace rlock::run {

OnAcquireError on_acquire_error(RedisErrorKind kind, IfUnavailable policy) {
  if (!lock::acquisition_unavailable(kind)) {
    return OnAcquireError::fail;
  }
  switch (policy) {
  case IfUnavailable::skip:
    return OnAcquireError::skip;
  case IfUnavailable::run:
    return OnAcquireError::run_unlocked;
  case IfUnavailable::fail:
    break;
  }
  return OnAcquireError::fail;
}

RunAcquisition acquire_for_run(lock::Store& store, const RunSpec& spec, IfUnavailable policy, SignalFd* signals,
                               const lock::NamedBusyCallback& on_busy) {
  RunAcquisition out;
  try {
    out.taken = lock::acquire_all(store, spec.request, spec.locks, signals, on_busy);
  } catch (const RedisError& e) {
    // Decided from what happened, the error's kind, never from an exit code:
    // busy is no RedisError (-E may set its code to 69); auth and usage
    // errors never qualify either.
    switch (on_acquire_error(e.kind(), policy)) {
    case OnAcquireError::fail:
      throw;
    case OnAcquireError::skip:
      out.kind = RunAcquisition::Kind::skip;
      break;
    case OnAcquireError::run_unlocked:
      out.kind = RunAcquisition::Kind::run_unlocked;
      break;
    }
    out.unavailable = e;
    return out;
  }
  out.kind = out.taken.acquired ? RunAcquisition::Kind::acquired : RunAcquisition::Kind::busy;
  return out;
}

OncePerCheck check_once_per(lock::Store& store, const RunSpec& spec) {
  const auto& keys = spec.locks.front();
  auto release = [&] {
    auto released = lock::release_all(store, spec.locks, spec.request.mode.mode, spec.request.owner, false);
    lock::warn_unreleased(spec.label, spec.locks, released);
  };
  lock::LockState state;
  try {
    state = store.inspect({keys.name}).front();
  } catch (...) {
    release();
    throw;
  }
  if (!state.server_now_ms) {
    release();
    throw RedisError(RedisErrorKind::protocol, "the server's answer to the once-per check has no time in it");
  }
  const long long length = spec.once_per->count();
  OncePerCheck out;
  out.verdict = lock::judge_once(state.last_done, *state.server_now_ms, length);
  out.window = lock::window_of(*state.server_now_ms, length);
  out.last_done = state.last_done;
  if (out.verdict != lock::OnceVerdict::not_done) {
    release();
  }
  return out;
}

// A run that did not run CMD, in each lock's history (best effort, once: only
// the client knows), through a store whose timeouts are short: Redis may be
// what could not be reached (--if-unavailable skip), and skipping must stay quick.
void log_skipped(lock::Store& store, const RunSpec& spec, const std::string& why) noexcept {
  try {
    auto brief = store.fresh(Millis(300));
    for (const auto& keys : spec.locks) {
      brief->log_event(keys, "skipped", spec.request.owner, {{"why", why}});
    }
  } catch (const std::exception& e) {
    log::debug("{}: {}", spec.label, e.what());
  }
}

} // namespace rlock::run
