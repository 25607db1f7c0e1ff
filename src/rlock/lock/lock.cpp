// The plain RLock's scripts (acquire, release, renew, force-unlock), the
// decoders of every script's answers, and inspect/find_locks' reads.

#include <rlock/core/log.hpp>
#include <rlock/core/text.hpp>
#include <rlock/lock/detail.hpp>
#include <rlock/lock/history.hpp>
#include <rlock/lock/layouts.hpp>
#include <rlock/lock/lease.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/script.hpp>

#include <fmt/format.h>

#include <fnmatch.h>
#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <numeric>
#include <type_traits>

namespace rlock::lock {

namespace {

using namespace detail;

constexpr std::string_view k_meta_field = "rlock:meta";

// A hash value read as a reentry count; 0 when it is not one.
long long count_of(const redis::Reply& value) {
  try {
    return value.as_integer();
  } catch (const RedisError&) {
    return 0;
  }
}

// inspect.lua answers for at most this many keys per call, and at most 64 KiB
// per hash, so no reply is larger than about 5 MiB.
constexpr std::size_t k_inspect_batch = 64;
// inspect.lua's ARGV per lock: its companion keys (queue, queue timeouts,
// waiters, permit timeouts, permit records, reader prefix, done record).
constexpr std::size_t k_inspect_companions = 7;

// A raw record value ('' or false: none).
std::optional<HolderRecord> record_of(const redis::Reply& value) {
  if (value.is_nil() || value.type != redis::Reply::Type::string || value.str.empty()) {
    return std::nullopt;
  }
  return parse_holder_record(value.str);
}

LockState decode_state(const std::string& name, const redis::Reply& entry) {
  constexpr std::string_view k_reader_record = "rlock:meta:";
  LockState state;
  state.name = name;
  state.type = key_type_of(element(entry, 0).as_string());
  state.ttl = Millis(element(entry, 1).as_integer());
  state.complete = element(entry, 3).as_integer() == 1;
  if (entry.elements.size() > 7 && entry.elements[7].type == redis::Reply::Type::integer) {
    state.server_now_ms = entry.elements[7].integer;
  }
  std::vector<std::pair<std::string, HolderRecord>> reader_records;
  const auto& fields = element(entry, 2);
  for (std::size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
    const auto& field = fields.elements[f].as_string();
    const auto& value = fields.elements[f + 1];
    if (field == k_meta_field) {
      state.record_raw = value.is_nil() ? "" : value.as_string();
      state.record = parse_holder_record(state.record_raw);
    } else if (field.starts_with(k_reader_record)) {
      reader_records.emplace_back(field.substr(k_reader_record.size()),
                                  parse_holder_record(value.is_nil() ? "" : value.as_string()));
    } else if (field == "mode") {
      state.mode_field = value.is_nil() ? "?" : value.as_string();
      state.layout = layout_of(state.mode_field);
      if (state.layout != Layout::read && state.layout != Layout::write) {
        state.layout = Layout::other; // kept as read (mode_field) for display
      } else {
        state.mode_field.clear();
      }
    } else if (!is_reserved_field(field)) {
      state.owners.emplace_back(field, count_of(value));
    }
  }
  const auto& queue = element(entry, 4);
  for (std::size_t q = 0; q + 2 < queue.elements.size(); q += 3) {
    WaiterView waiter;
    waiter.owner = queue.elements[q].as_string();
    if (queue.elements[q + 1].type == redis::Reply::Type::integer) {
      waiter.gives_up_in = Millis(queue.elements[q + 1].integer);
    }
    waiter.record = record_of(queue.elements[q + 2]);
    if (waiter.record && waiter.record->until_ms && state.server_now_ms) {
      waiter.gives_up_in = Millis(*waiter.record->until_ms - *state.server_now_ms);
    }
    if (waiter.gives_up_in && waiter.gives_up_in->count() <= 0) {
      continue; // its give-up time has passed: a ghost, not a waiter
    }
    if (waiter.record && waiter.record->since_ms && state.server_now_ms) {
      waiter.waited = Millis(std::max(0LL, *state.server_now_ms - *waiter.record->since_ms));
    }
    state.waiters.push_back(std::move(waiter));
  }
  const auto& readers = element(entry, 5);
  for (std::size_t r = 0; r + 1 < readers.elements.size(); r += 2) {
    HolderView reader;
    reader.owner = readers.elements[r].as_string();
    reader.ttl = Millis(readers.elements[r + 1].as_integer());
    for (const auto& [owner, count] : state.owners) {
      reader.count = owner == reader.owner ? count : reader.count;
    }
    for (auto& [owner, record] : reader_records) {
      if (owner == reader.owner) {
        reader.record = record;
      }
    }
    state.holders.push_back(std::move(reader));
  }
  const auto& permits = element(entry, 6);
  if (!permits.elements.empty()) {
    state.layout = Layout::semaphore;
    try {
      state.permits_free = permits.elements[0].as_integer();
    } catch (const RedisError&) {
      // not a number: a foreign string after all; shown with what could be read
    }
    for (std::size_t p = 1; p + 2 < permits.elements.size(); p += 3) {
      HolderView permit;
      permit.owner = permits.elements[p].as_string();
      permit.ttl = Millis(permits.elements[p + 1].as_integer());
      if (permit.ttl.count() <= 0) {
        // Its lease has ended (the scripts treat a lease end at or before now
        // as expired, lib/permits.lua): not a holder, a free permit that the
        // next acquisition gives back.
        if (state.permits_free) {
          ++*state.permits_free;
        }
        continue;
      }
      permit.record = record_of(permits.elements[p + 2]);
      state.holders.push_back(std::move(permit));
    }
  } else if (state.type == KeyType::hash && state.layout == Layout::none) {
    state.layout = state.waiters.empty() ? Layout::exclusive : Layout::fair;
  }
  if (entry.elements.size() > 8) {
    const auto& done = element(entry, 8);
    if (done.elements.size() >= 2) {
      state.last_done = parse_done_record(done.elements[0].is_nil() ? "" : done.elements[0].as_string(),
                                          done.elements[1].as_integer());
    }
  }
  return state;
}

std::vector<LockState> inspect_batch(redis::Client& client, const std::vector<std::string>& names) {
  std::vector<std::string> companions;
  for (const auto& name : names) {
    try {
      auto lock = keys_for(name);
      const std::string* each[] = {&lock.queue,          &lock.queue_timeouts, &lock.waiters, &lock.permit_timeouts,
                                   &lock.permit_records, &lock.reader_prefix,  &lock.done};
      static_assert(std::extent_v<decltype(each)> == k_inspect_companions);
      for (const auto* key : each) {
        companions.push_back(*key);
      }
    } catch (const UsageError&) {
      // A key found by SCAN whose companions would not share its slot (rlock
      // never makes one): read it alone (the script finds no companion in NAME).
      companions.insert(companions.end(), k_inspect_companions, name);
    }
  }
  auto reply = run_script(client, one_shot(client, false), scripts::inspect, names, companions).reply;
  std::vector<LockState> states;
  states.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    states.push_back(decode_state(names[i], element(reply, i)));
  }
  return states;
}

// The semaphore whose permit set is `key` ({NAME}:timeout, or NAME:timeout
// when NAME has a '{'), if it is one.
std::optional<std::string> semaphore_of(const std::string& key) {
  constexpr std::string_view k_suffix = ":timeout";
  if (!key.ends_with(k_suffix)) {
    return std::nullopt;
  }
  std::string base = key.substr(0, key.size() - k_suffix.size());
  std::string name = base.size() > 2 && base.front() == '{' && base.back() == '}' ? base.substr(1, base.size() - 2) : base;
  if (name.empty() || suffixed_name(name, "timeout") != key) {
    return std::nullopt;
  }
  return name;
}

// The release message of the exclusive lock's scripts said again (detail::
// publish_again_if_sharded): on the channel the script used (a fair queue's
// head's own, a read-write lock's or a semaphore's for force-unlock), or the
// release channel when the answer does not say (a resend's).
void publish_release_again(redis::Client& client, const LockKeys& keys, const std::string& used,
                           const std::string& channel) {
  // Redisson's semaphore waiters wake on a positive count only.
  publish_again_if_sharded(client, keys, used, channel.empty() ? keys.channel : channel,
                           channel == keys.permit_channel ? "1" : "0");
}

// Whether a user's ACL refused the turns' set (rlock_turns:{NAME}): then
// no request names it again in this process, and every release wakes every
// waiter, as before there were turns.
std::atomic<bool> g_turns_refused{false};

bool is_turns_key(std::string_view key) {
  return key.starts_with("rlock_turns:");
}

// The turns' set, beside a script's keys, unless refused.
void with_turns(std::vector<std::string>& script_keys, const LockKeys& keys) {
  if (!g_turns_refused.load()) {
    script_keys.push_back(keys.turns);
  }
}

void turns_refused(const std::string& user, const std::string& key) {
  if (g_turns_refused.exchange(true)) {
    return;
  }
  log::warning("waiters are woken all at once, not one a release: this Redis user may not use the key {}; "
               "locking goes on without it. To wake one: {} (for names under a prefix, the README's "
               "~rlock_turns:{{PREFIX* pattern)",
               quote(key), printable(history_acl(user, key)));
}

// The exclusive lock's release (lua/release.lua), also a fair hold's.
ReleaseResult exclusive_release(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner,
                                bool all, const std::string& op_id, const std::string& only_if_acquired_by,
                                redis::RetryPolicy::Mode retry) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), true, std::nullopt, {}};
  const std::string publish = client.publish_command();
  std::vector<std::string> script_keys{keys.name,  keys.channel,        latch_key(keys.unlock_latch, op_id),
                                       keys.queue, keys.queue_timeouts, keys.waiters};
  if (!only_if_acquired_by.empty()) {
    script_keys.push_back(latch_key(keys.acquire_latch, only_if_acquired_by));
  }
  with_turns(script_keys, keys); // a waiter's turn, when plain waiters wait for theirs
  std::vector<std::string> args{owner, all ? "1" : "0", publish, ms(scope.policy.latch_lifetime()), "1", std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys, release_history(mode));
  auto reply = run_script(client, scope, scripts::release, script_keys, args).reply;
  ReleaseResult result = decode_release(reply);
  if (result.check == OwnerCheck::ok && result.remaining == 0) {
    publish_release_again(client, keys, publish, optional_string(reply, 1));
  }
  return result;
}

// The exclusive lock's renewal (lua/renew.lua), also a fair hold's.
RenewResult exclusive_renew(redis::Client& client, const LockKeys& keys, const std::string& owner,
                            Millis lease, redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) {
  redis::RetryScope scope{redis::RetryPolicy(client.timeouts(), retry), false, std::nullopt, {}};
  std::vector<std::string> script_keys{keys.name};
  std::vector<std::string> args{owner, ms(lease), std::string(redis::k_deadline_slot)};
  with_history(script_keys, args, keys);
  return decode_renew(run_script(client, scope, scripts::renew, script_keys, args, sync));
}

// Calls the function of the layout `mode`'s holds live in: `exclusive` for the
// RLock hash (a fair hold's too: RFairLock's lock is that hash), `read_write`
// for RReadWriteLock's, `semaphore` for RPermitExpirableSemaphore's.
template <typename Exclusive, typename ReadWrite, typename Semaphore>
auto by_layout(Mode mode, Exclusive exclusive, ReadWrite read_write, Semaphore semaphore) {
  switch (mode) {
  case Mode::exclusive:
  case Mode::fair:
    break;
  case Mode::read:
  case Mode::write:
    return read_write();
  case Mode::limit:
    return semaphore();
  }
  return exclusive();
}

} // namespace

bool acquisition_unavailable(RedisErrorKind kind) {
  return unavailable_kind(kind);
}

namespace detail {

std::string ms(Millis value) {
  return std::to_string(value.count());
}

std::vector<std::string> with_process(std::vector<std::string> args, const HolderInfo& info) {
  args.push_back(info.boot_id);
  args.push_back(info.start_ticks ? std::to_string(*info.start_ticks) : std::string());
  return args;
}

LockState decode_inspected(const std::string& name, const redis::Reply& entry) {
  return decode_state(name, entry);
}

redis::EvalReply run_script(redis::Client& client, const redis::RetryScope& scope, const redis::Script& script,
                            const std::vector<std::string>& keys, const std::vector<std::string>& args,
                            const redis::SyncReplicas& sync) {
  redis::RetryScope routed = scope;
  routed.reroutes = [&client] { return client.reroutes(); };
  // The earliest send that got no answer: it may have been applied, and a
  // later send answered from its latch (lock::lease_start).
  std::optional<TimePoint> unanswered;
  auto send = [&](const std::vector<std::string>& k, const std::vector<std::string>& a) {
    redis::EvalReply result;
    redis::send_with_retries(routed, [&] {
      try {
        result = client.eval(script, k, a, sync);
      } catch (const RedisError& e) {
        if (auto at = e.sent_at(); at && (!unanswered || *at < *unanswered)) {
          unanswered = at;
        }
        throw;
      }
      return result.reply;
    });
    result.earlier_unanswered = unanswered;
    return result;
  };
  // Refused before the script ran (key patterns are checked first): nothing
  // was applied. An optional key may be the one the user may not use (a
  // lock-only ACL user from before it): the turns' set, then the history, then
  // both are left out, and the change goes without them (a script tells its
  // optional keys by their names). If the lock's own keys are refused, the
  // last send says so.
  const auto turns = std::find_if(keys.begin(), keys.end(), [](const auto& k) { return is_turns_key(k); });
  const bool history = carries_history(keys, args);
  std::vector<std::pair<bool, bool>> tries{{false, false}}; // {without the turns, without the history}
  if (turns != keys.end()) {
    tries.emplace_back(true, false);
  }
  if (history) {
    tries.emplace_back(false, true);
  }
  if (turns != keys.end() && history) {
    tries.emplace_back(true, true);
  }
  for (std::size_t i = 0;; ++i) {
    auto [no_turns, no_history] = tries[i];
    std::vector<std::string> k = keys, a = args;
    if (no_history) {
      k.pop_back();
      a.pop_back();
    }
    if (no_turns) {
      k.erase(k.begin() + (turns - keys.begin()));
    }
    try {
      auto result = send(k, a);
      if (no_turns) {
        turns_refused(client.target().user, *turns);
      }
      if (no_history) {
        history_refused(client.target().user, keys.back());
      }
      return result;
    } catch (const RedisError& e) {
      if (!denies_a_key(e) || i + 1 == tries.size()) {
        throw;
      }
    }
  }
}

std::string unsynced_phrase(const redis::EvalReply& answer) {
  const auto& required = answer.required;
  const std::string on = answer.node.empty() ? std::string() : " on " + answer.node;
  if (required.automatic) {
    return fmt::format("no replica acknowledged it{} within {} (the primary has replicas: one must confirm "
                       "each lock by default; --sync-replicas 0 turns it off)",
                       on, format_duration(required.timeout));
  }
  return fmt::format("{} of {} replicas acknowledged it{} within {} (--sync-replicas)", answer.acked,
                     required.count, on, format_duration(required.timeout));
}

const redis::Reply& element(const redis::Reply& reply, std::size_t i) {
  if (!reply.is_array() || reply.elements.size() <= i) {
    throw RedisError(RedisErrorKind::protocol, fmt::format("unexpected script reply {}", reply.summary()));
  }
  return reply.elements[i];
}

std::string optional_string(const redis::Reply& reply, std::size_t i) {
  if (!reply.is_array() || reply.elements.size() <= i || reply.elements[i].is_nil()) {
    return {};
  }
  return reply.elements[i].as_string();
}

OwnerCheck owner_check(long long code) {
  switch (code) {
  case -1:
    return OwnerCheck::missing;
  case -2:
    return OwnerCheck::other;
  case -3:
    return OwnerCheck::foreign;
  case -4:
    return OwnerCheck::layout;
  default:
    return OwnerCheck::ok;
  }
}

void undo_if_unsynced(redis::Client& client, const AcquireRequest& request, const AcquireResult& result,
                      const redis::EvalReply& answer) {
  const long long acked = answer.acked;
  const redis::SyncReplicas& required = answer.required;
  if (!result.acquired || required.count <= 0 || acked >= required.count) {
    return;
  }
  // Undo exactly what this acquisition added (one level), owner-checked: a
  // re-entry's new level only; the levels held before stay.
  std::string undone = result.reentered
                           ? fmt::format("only the new level was undone: the lock stays held by --owner {}, "
                                         "{} level{} as before",
                                         request.owner, result.count - 1, result.count - 1 == 1 ? "" : "s")
                           : std::string("it was released");
  try {
    release(client, request.keys, request.mode.mode, request.owner, false, new_op_id());
  } catch (const RedisError& e) {
    undone = fmt::format("releasing it failed ({}): release with --owner {}", e.what(), request.owner);
  }
  throw RedisError(RedisErrorKind::unsynced, fmt::format("{}; {}", unsynced_phrase(answer), undone));
}

AcquireResult decode_acquire(const redis::EvalReply& answer, TimePoint called, Millis asked) {
  const auto& reply = answer.reply;
  AcquireResult result;
  result.sent_at = called;
  long long code = element(reply, 0).as_integer();
  if (code != 1 && code != 2) {
    result.holder = decode_holder(reply);
    // 1: queued for its turn at the head, 2: behind it (lua/lib/turns.lua).
    const long long turn = reply.elements.size() > 6 && reply.elements[6].type == redis::Reply::Type::integer
                               ? reply.elements[6].integer
                               : 0;
    result.queued = turn == 1 || turn == 2;
    result.behind = turn == 2;
    return result;
  }
  result.acquired = true;
  result.reentered = code == 2;
  result.count = element(reply, 1).as_integer();
  result.fence = element(reply, 2).as_integer();
  result.lease = Millis(element(reply, 3).as_integer());
  result.replicas_acked = answer.acked;
  // An answer from the latch (a fifth element 1): an earlier send applied it.
  const bool replayed = reply.elements.size() > 4 && reply.elements[4].type == redis::Reply::Type::integer &&
                        reply.elements[4].integer == 1;
  result.sent_at = lease_start({called, answer.sent, answer.earlier_unanswered}, replayed, result.lease, asked);
  return result;
}

namespace {

// What {-2, holder}, {-3, type} and {-4, layout} say, into `result` (its check set).
template <class Result> void decode_refusal(const redis::Reply& reply, Result& result) {
  std::string said = optional_string(reply, 1);
  switch (result.check) {
  case OwnerCheck::other:
    result.detail = std::move(said);
    break;
  case OwnerCheck::foreign:
    result.type = key_type_of(said);
    break;
  case OwnerCheck::layout:
    result.layout = layout_of(said);
    result.detail = std::move(said); // shown for Layout::other only
    break;
  default:
    break;
  }
}

} // namespace

ReleaseResult decode_release(const redis::Reply& reply) {
  long long code = element(reply, 0).as_integer();
  ReleaseResult result;
  result.check = owner_check(code);
  if (result.check == OwnerCheck::ok) {
    result.remaining = code;
  } else {
    decode_refusal(reply, result);
  }
  return result;
}

RenewResult decode_renew(const redis::EvalReply& answer) {
  const auto& reply = answer.reply;
  RenewResult result;
  result.check = owner_check(element(reply, 0).as_integer());
  result.replicas_acked = answer.acked;
  if (result.check != OwnerCheck::ok) {
    decode_refusal(reply, result);
    return result;
  }
  result.lease = Millis(element(reply, 1).as_integer());
  if (answer.required.count > 0 && answer.acked < answer.required.count) {
    throw RedisError(RedisErrorKind::unsynced,
                     fmt::format("renewed, but {}", unsynced_phrase(answer)));
  }
  return result;
}

void publish_again_if_sharded(redis::Client& client, const LockKeys& keys, const std::string& used,
                              const std::string& channel, const std::string& message) {
  if (client.publish_command() == used) {
    return;
  }
  try {
    client.publish(channel, message);
  } catch (const RedisError& e) {
    log::debug("cannot publish the release of {} again: {}", quote(keys.name), e.what());
  }
}

Holder decode_holder(const redis::Reply& reply) {
  Holder holder;
  holder.owner = optional_string(reply, 1);
  holder.ttl = Millis(element(reply, 2).as_integer());
  holder.type = key_type_of(optional_string(reply, 3));
  if (reply.elements.size() > 4 && !reply.elements[4].is_nil()) {
    holder.record = parse_holder_record(reply.elements[4].as_string());
  }
  holder.layout = layout_of(optional_string(reply, 5));
  if (holder.type == KeyType::hash && holder.ttl.count() == -2 && holder.layout == Layout::none) {
    // The lock is free, but RFairLock's queue has a live head: its turn (the
    // acquire scripts answer the head this way; a held lock always has a PTTL).
    holder.queue_turn = true;
  }
  return holder;
}

} // namespace detail

std::string new_op_id() {
  unsigned long long value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return fmt::format("{:016x}", value);
}

redis::RetryScope one_shot(const redis::Client& client, bool latched) {
  return {redis::RetryPolicy(client.timeouts(), redis::RetryPolicy::Mode::one_shot), latched, std::nullopt, {}};
}

AcquireResult try_acquire(redis::Client& client, const AcquireRequest& request, const std::string& op_id,
                          const redis::RetryScope& scope, const std::optional<Turn>& turn) {
  switch (request.mode.mode) {
  case Mode::exclusive:
    break;
  case Mode::fair:
    return fair_try_acquire(client, request, op_id, scope, request.wait.has_value());
  case Mode::read:
  case Mode::write:
    return rw_try_acquire(client, request, op_id, scope);
  case Mode::limit:
    return permit_try_acquire(client, request, op_id, scope);
  }
  const TimePoint called = Clock::now(); // lease_start's bound: the lease starts no earlier
  const auto& keys = request.keys;
  auto args = with_process({request.owner, ms(request.lease), request.own_token ? "1" : "0",
                            ms(scope.policy.latch_lifetime()), request.info.host, std::to_string(request.info.pid),
                            request.info.command, RLOCK_VERSION},
                           request.info);
  args.push_back(request.renews ? "1" : "0");
  args.emplace_back(redis::k_deadline_slot);
  std::vector<std::string> script_keys{keys.name,  keys.fence_key,      latch_key(keys.acquire_latch, op_id),
                                       keys.queue, keys.queue_timeouts, keys.waiters};
  // The turns' set: this hold's release names the waiters' turns (its record
  // says so), and a waiter's attempt waits for its own there.
  with_turns(script_keys, keys);
  args.push_back(turn ? ms(std::max(Millis(0), turn->wait_left)) : std::string());
  args.push_back(turn && turn->queued ? "1" : "0");
  args.push_back(keys.channel); // taking a turn tells the head (lua/lib/turns.lua)
  args.push_back(client.publish_command());
  with_history(script_keys, args, keys, acquisition_history(request));
  auto answer = run_script(client, scope, scripts::acquire, script_keys, args, request.sync);
  auto result = decode_acquire(answer, called, request.lease);
  undo_if_unsynced(client, request, result, answer);
  return result;
}

void turn_leave(redis::Client& client, const LockKeys& keys, const std::string& owner) noexcept {
  try {
    run_script(client, one_shot(client, false), scripts::turn_leave, {keys.name, keys.channel, keys.turns},
               {owner, client.publish_command(), std::string(redis::k_deadline_slot)});
  } catch (const std::exception& e) {
    log::debug("cannot leave the turns of {}: {}", quote(keys.name), e.what());
  }
}

ReleaseResult release(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, bool all,
                      const std::string& op_id, const std::string& only_if_acquired_by,
                      redis::RetryPolicy::Mode retry) {
  return by_layout(
      mode, [&] { return exclusive_release(client, keys, mode, owner, all, op_id, only_if_acquired_by, retry); },
      [&] { return rw_release(client, keys, mode, owner, all, op_id, only_if_acquired_by, retry); },
      [&] { return permit_release(client, keys, owner, all, op_id, only_if_acquired_by, retry); });
}

RenewResult renew(redis::Client& client, const LockKeys& keys, Mode mode, const std::string& owner, Millis lease,
                  redis::RetryPolicy::Mode retry, const redis::SyncReplicas& sync) {
  return by_layout(
      mode, [&] { return exclusive_renew(client, keys, owner, lease, retry, sync); },
      [&] { return rw_renew(client, keys, mode, owner, lease, retry, sync); },
      [&] { return permit_renew(client, keys, owner, lease, retry, sync); });
}

namespace {

// force_unlock.lua's answer: {0} nothing, {1, type[, channel]} removed, {2} changed.
redis::Reply force_unlock_script(redis::Client& client, const LockKeys& keys, const ExpectedHold* expected) {
  auto scope = one_shot(client, true);
  const std::string publish = client.publish_command();
  std::vector<std::string> args{publish, ms(scope.policy.latch_lifetime()), "1"};
  args.push_back(expected != nullptr ? expected->owner : std::string());
  args.push_back(expected != nullptr ? expected->record_raw : std::string());
  args.emplace_back(redis::k_deadline_slot);
  std::vector<std::string> script_keys{keys.name,           keys.channel,    latch_key(keys.unlock_latch, new_op_id()),
                                       keys.queue,          keys.queue_timeouts, keys.waiters,
                                       keys.rw_channel,     keys.permit_timeouts, keys.permit_channel,
                                       keys.permit_records};
  with_turns(script_keys, keys);
  EventFields extras;
  if (expected != nullptr) {
    extras.emplace_back("if_dead", expected->verdict.substr(0, 300));
  }
  with_history(script_keys, args, keys, extras);
  auto reply = run_script(client, scope, scripts::force_unlock, script_keys, args).reply;
  if (element(reply, 0).as_integer() == 1) {
    publish_release_again(client, keys, publish, optional_string(reply, 2));
  }
  return reply;
}

} // namespace

std::optional<KeyType> force_unlock(redis::Client& client, const LockKeys& keys) {
  auto reply = force_unlock_script(client, keys, nullptr);
  if (element(reply, 0).as_integer() != 1) {
    return std::nullopt;
  }
  return key_type_of(optional_string(reply, 1));
}

ConditionalRemoval force_unlock_if(redis::Client& client, const LockKeys& keys,
                                   const ExpectedHold& expected) {
  switch (element(force_unlock_script(client, keys, &expected), 0).as_integer()) {
  case 0:
    return ConditionalRemoval::gone;
  case 1:
    return ConditionalRemoval::removed;
  default:
    return ConditionalRemoval::changed;
  }
}

std::vector<LockState> inspect(redis::Client& client, const std::vector<std::string>& names) {
  // A script's keys must share one hash slot on a Cluster: batches of names
  // of one slot there (in the order given), of any names elsewhere.
  std::vector<std::size_t> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  bool by_slot = names.size() > 1 && client.is_cluster();
  if (by_slot) {
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return hash_slot(names[a]) < hash_slot(names[b]); });
  }
  std::vector<LockState> states(names.size());
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start;
    std::vector<std::string> batch;
    while (end < order.size() && batch.size() < k_inspect_batch &&
           (!by_slot || hash_slot(names[order[end]]) == hash_slot(names[order[start]]))) {
      batch.push_back(names[order[end++]]);
    }
    auto part = inspect_batch(client, batch);
    for (std::size_t i = 0; i < part.size(); ++i) {
      states[order[start + i]] = std::move(part[i]);
    }
    start = end;
  }
  return states;
}

bool redisson_owner_shaped(std::string_view field) {
  if (field.ends_with(":write")) {
    field.remove_suffix(6);
  }
  // 8-4-4-4-12 hex digits, ':', 1 to 20 digits.
  constexpr std::size_t k_uuid = 36;
  if (field.size() < k_uuid + 2 || field.size() > k_uuid + 21 || field[k_uuid] != ':') {
    return false;
  }
  for (std::size_t i = 0; i < k_uuid; ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? field[i] != '-' : std::isxdigit(static_cast<unsigned char>(field[i])) == 0) {
      return false;
    }
  }
  return std::all_of(field.begin() + k_uuid + 1, field.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool lock_shaped(const LockState& state) {
  if (state.layout == Layout::semaphore) {
    return !state.holders.empty();
  }
  if (state.type != KeyType::hash || !state.complete || (state.owners.empty() && !state.record)) {
    return false;
  }
  if (state.ttl.count() < 0 && !state.record &&
      !std::all_of(state.owners.begin(), state.owners.end(),
                   [](const auto& owner) { return redisson_owner_shaped(owner.first); })) {
    return false;
  }
  return std::all_of(state.owners.begin(), state.owners.end(),
                     [](const auto& owner) { return owner.second > 0; });
}

std::vector<LockState> find_locks(redis::Client& client, const std::string& pattern) {
  // SCAN ends when the cursor comes back to 0, after roughly (keys / COUNT)
  // rounds; this bound (a billion keys' worth) only stops a server that never
  // ends a scan, and says so.
  constexpr long k_max_rounds = 1'000'000;
  std::vector<std::string> candidates;
  auto scan = [&](const redis::Endpoint& node, const std::string& match, const char* type, auto&& take) {
    std::string cursor = "0";
    long round = 0;
    do {
      if (++round > k_max_rounds) {
        throw RedisError(RedisErrorKind::protocol,
                         fmt::format("SCAN of {} did not end after {} rounds ({} keys seen); listing stopped",
                                     node.display(), k_max_rounds, candidates.size()));
      }
      auto reply = redis::send_with_retries(one_shot(client, false), [&] {
        return client.command_on(node, {"SCAN", cursor, "MATCH", match, "COUNT", "1000", "TYPE", type});
      });
      cursor = element(reply, 0).as_string();
      for (const auto& key : element(reply, 1).elements) {
        take(key.as_string());
      }
    } while (cursor != "0");
  };
  for (const auto& node : client.primaries()) {
    // Locks of the hash layouts (RLock, RFairLock, RReadWriteLock)...
    scan(node, pattern, "hash", [&](std::string key) { candidates.push_back(std::move(key)); });
    // ...and semaphores with permits out, found by their permit set {NAME}:timeout.
    scan(node, "*:timeout", "zset", [&](const std::string& key) {
      if (auto name = semaphore_of(key); name && fnmatch(pattern.c_str(), name->c_str(), 0) == 0) {
        candidates.push_back(std::move(*name));
      }
    });
  }
  // SCAN may return a key more than once (a rehash during the scan).
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<LockState> locks;
  for (auto& state : inspect(client, candidates)) {
    if (lock_shaped(state)) {
      locks.push_back(std::move(state));
    }
  }
  return locks;
}

} // namespace rlock::lock
