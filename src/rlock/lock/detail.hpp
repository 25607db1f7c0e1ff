#pragma once

// Shared by the files of lock/ that call scripts (lock.cpp and one file per
// mode layout: fair.cpp, rwlock.cpp, permits.cpp). Not for use outside lock/.

#include <rlock/core/duration.hpp>
#include <rlock/lock/lock.hpp>
#include <rlock/redis/client.hpp>
#include <rlock/redis/reply.hpp>
#include <rlock/redis/retry.hpp>
#include <rlock/redis/script.hpp>

#include <string>
#include <vector>

namespace rlock::lock::detail {

std::string ms(Millis value);

// `args` with the holder's process identity appended, the last two ARGV of
// every acquisition script (lib/record.lua): boot id, start time in ticks (""
// when unknown).
std::vector<std::string> with_process(std::vector<std::string> args, const HolderInfo& info);

// One script request, resent as `scope` allows (every resend carries the same
// KEYS and ARGV, so the same op id), routed by the client.
redis::EvalReply run_script(redis::Client& client, const redis::RetryScope& scope, const redis::Script& script,
                            const std::vector<std::string>& keys, const std::vector<std::string>& args,
                            const redis::SyncReplicas& sync = {});

// Element i of an array reply; throws RedisError(protocol) when there is none.
const redis::Reply& element(const redis::Reply& reply, std::size_t i);
// Element i as a string; "" when absent or nil.
std::string optional_string(const redis::Reply& reply, std::size_t i);

// Decodes the {-1}, {-2, holder}, {-3, type}, {-4, layout} answers shared by release and renew.
OwnerCheck owner_check(long long code);

// The answer every acquire script gives (lua/*acquire.lua): {1|2, count, fence,
// lease_ms} acquired (1) or re-entered (2), or the busy answer (decode_holder),
// with the replicas that acknowledged it. Pure: the caller then calls
// undo_if_unsynced. A layout's own answers are the caller's to handle first;
// retry_after is left to it. A grant's sent_at is lock::lease_start's, from
// the answer's sends, `called` (when the caller asked) and `asked` (the lease
// asked for): a lease of `asked` from sent_at is proven; a busy answer's: `called`.
AcquireResult decode_acquire(const redis::EvalReply& answer, TimePoint called, Millis asked);

// The answer every release script gives: {n} released, n levels still held (0:
// this hold is gone); or owner_check's {-1}, {-2, holder}, {-3, type}, {-4,
// layout} (decoded into `layout` too). Anything after n (a channel, a count) is the caller's.
ReleaseResult decode_release(const redis::Reply& reply);

// The answer every renew script gives: {1, lease_ms}, or owner_check's. A
// renewal that fewer replicas acknowledged than answer.required asks throws
// RedisError(unsynced): not confirmed (the lease clock decides, never accepted).
RenewResult decode_renew(const redis::EvalReply& answer);

// A release message sent with `used` (PUBLISH) by a request that went out before
// the client knew it talks to a Redis 7+ Cluster (the first request on a new
// connection learns it from the HELLO sent with it): sharded subscribers
// (Redisson's, rlock's) did not hear it, so say `message` again on `channel`
// with the client's command (SPUBLISH). Best effort: never throws a RedisError.
void publish_again_if_sharded(redis::Client& client, const LockKeys& keys, const std::string& used,
                              const std::string& channel, const std::string& message);

// "0 of 1 replicas acknowledged it within 1s (--sync-replicas)"; for the
// default (required.automatic): "no replica acknowledged it within 100ms (...)";
// " on NODE" after "it" when the answer names the primary (a Cluster, Sentinel).
std::string unsynced_phrase(const redis::EvalReply& answer);

// After an acquisition (`result`, from decode_acquire) that fewer replicas
// acknowledged than the client required of it (answer.required: --sync-replicas,
// or the default on a primary with replicas): undoes it (one level,
// owner-checked, through lock::release with the request's mode) and throws
// RedisError(unsynced). Returns when nothing is to do (busy, or synced enough).
void undo_if_unsynced(redis::Client& client, const AcquireRequest& request, const AcquireResult& result,
                      const redis::EvalReply& answer);

// The busy answer shared by every acquire script: {0, holder, pttl, type, meta, mode}
// (meta: a raw holder record, '' or false; mode: the layout it is held in when
// that is not the one asked for, optional).
Holder decode_holder(const redis::Reply& reply);

// inspect.lua's answer for the lock `name` decoded: fields, owners, records,
// readers, permits and the live fair waiters (an entry whose give-up time has
// passed is a ghost and left out). Pure.
LockState decode_inspected(const std::string& name, const redis::Reply& entry);

} // namespace rlock::lock::detail
