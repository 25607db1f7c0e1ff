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

// "0 of 1 replicas acknowledged it within 1s (--sync-replicas)"
std::string unsynced_phrase(long long acked, const redis::SyncReplicas& sync);

// After an acquisition that fewer replicas acknowledged than --sync-replicas
// asks: undoes it (one level, owner-checked, through lock::release with the
// request's mode) and throws RedisError(unsynced). Returns when nothing is to do.
void undo_if_unsynced(redis::Client& client, const AcquireRequest& request, long long acked);

// The busy answer shared by every acquire script: {0, holder, pttl, type, meta, mode}
// (meta: a raw holder record, '' or false; mode: the layout it is held in when
// that is not the one asked for, optional).
Holder decode_holder(const redis::Reply& reply);

} // namespace rlock::lock::detail
