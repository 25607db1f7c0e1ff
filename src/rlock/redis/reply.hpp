#pragma once

// An owned RESP reply and its typed accessors.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct redisReply;

namespace rlock::redis {

// An owned copy of one RESP reply. Error replies are turned into exceptions by
// Connection before they reach callers, so `error` only appears inside arrays.
struct Reply {
  enum class Type { nil, integer, string, status, error, array };
  Type type = Type::nil;
  long long integer = 0;
  std::string str;             // string, status, error
  std::vector<Reply> elements; // array

  static Reply from_hiredis(const redisReply& reply);

  bool is_nil() const { return type == Type::nil; }
  bool is_array() const { return type == Type::array; }
  // The integer, or the string parsed as an integer (Lua numbers arrive as
  // integers; hash values as strings). Throws RedisError(protocol) otherwise.
  long long as_integer() const;
  // The string or status text; throws RedisError(protocol) otherwise.
  const std::string& as_string() const;
  // A short one-line rendering for -v logs and messages: strings over 80 bytes and
  // arrays over 8 elements are cut.
  std::string summary() const;
};

// Caps on one reply, so that a broken or hostile server cannot make rlock allocate
// without bound (hiredis buffers a bulk string of any announced length, and
// allocates an array's element table from its header alone).
//
// rlock's largest replies are a SCAN page (COUNT 1000, names of at most 1024
// bytes) and an inspect batch (200 lock hashes of a few fields each): kilobytes,
// at most a few MB. Both caps are over ten times that, and keep the memory of a
// reply that reaches them near 200 MB: the wire bytes are buffered once, the parsed
// values cost about 150 bytes each (hiredis's object, then the Reply copy).
//
// Bytes received for one reply (its wire size, headers included).
inline constexpr std::size_t k_max_reply_bytes = std::size_t{64} << 20;
// Values in one reply, nested ones included (every string, integer, nil and array).
inline constexpr std::size_t k_max_reply_values = std::size_t{1} << 20;

struct ReplyLimits {
  std::size_t bytes = k_max_reply_bytes;
  std::size_t values = k_max_reply_values;
};

// Turns the bytes received from a server into Replies, one at a time, with
// hiredis's reader; refuses a reply over the limits as soon as it is seen to be.
class ReplyReader {
public:
  explicit ReplyReader(ReplyLimits limits = {});
  ~ReplyReader();
  ReplyReader(ReplyReader&&) noexcept;
  ReplyReader& operator=(ReplyReader&&) noexcept;

  // Appends bytes received from the server. Throws std::bad_alloc.
  void feed(const char* data, std::size_t len);
  // Moves the next complete reply into `out` and returns true; returns false when
  // more bytes are needed. Throws RedisError(protocol) for bytes that are not
  // RESP, and for a reply over the limits ("reply too large (over 64 MiB)"): an
  // array header announcing more values than the limit is refused at once. After
  // a throw the reader is unusable (the stream's position is lost).
  bool next(Reply& out);
  // True when bytes were received that next() has not returned yet (a complete
  // reply, or only part of one).
  bool buffered() const;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace rlock::redis
