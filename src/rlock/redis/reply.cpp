// RESP replies copied out of hiredis into owned values, with typed accessors.

#include <rlock/core/text.hpp>
#include <rlock/redis/errors.hpp>
#include <rlock/redis/hiredis.hpp>
#include <rlock/redis/reply.hpp>

#include <fmt/format.h>

#include <charconv>
#include <new>
#include <utility>

namespace rlock::redis {

// What the reply being read has used so far; hiredis hands it to the reply
// constructors below as the read task's privdata. (Outside the anonymous
// namespace: ReplyReader::State, declared in the header, holds one.)
struct Budget {
  ReplyLimits limits;
  std::size_t bytes = 0;  // bytes received since the reply began
  std::size_t values = 0; // values created for it
  bool over = false;      // a constructor refused a value: the reply is too large
};

namespace {

// hiredis keeps its reply constructors in a static table (defaultFunctions, not
// exported in 0.14); a reader made by redisReaderCreate points at it, so copy it
// from one. The wrappers below build the same redisReply objects, so
// freeReplyObject still frees them.
const redisReplyObjectFunctions& default_functions() {
  static const redisReplyObjectFunctions table = [] {
    redisReader* probe = redisReaderCreate();
    if (probe == nullptr) {
      throw std::bad_alloc();
    }
    redisReplyObjectFunctions copy = *probe->fn;
    redisReaderFree(probe);
    return copy;
  }();
  return table;
}

// Counts one more value of the reply, and `announced` more to come (an array's
// elements); false, and the reply marked too large, when they would go over the
// limit. A constructor returning NULL makes hiredis stop with an error.
bool admit(const redisReadTask* task, long long announced = 0) {
  auto& budget = *static_cast<Budget*>(task->privdata);
  if (announced < 0 || budget.values >= budget.limits.values ||
      static_cast<unsigned long long>(announced) > budget.limits.values - budget.values - 1) {
    budget.over = true;
    return false;
  }
  ++budget.values;
  return true;
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
  return admit(task) ? default_functions().createString(task, str, len) : nullptr;
}

// hiredis 0.14 refuses counts over INT_MAX and under -1 itself (older versions did
// not, and stored a negative count as a huge size_t); refused here too, so that
// this does not depend on it. -1 (a nil array) arrives as create_nil.
void* create_array(const redisReadTask* task, int elements) {
  return admit(task, elements) ? default_functions().createArray(task, elements) : nullptr;
}

void* create_integer(const redisReadTask* task, long long value) {
  return admit(task) ? default_functions().createInteger(task, value) : nullptr;
}

void* create_nil(const redisReadTask* task) {
  return admit(task) ? default_functions().createNil(task) : nullptr;
}

void free_object(void* reply) {
  default_functions().freeObject(reply);
}

redisReplyObjectFunctions* capped_functions() {
  static redisReplyObjectFunctions table{create_string, create_array, create_integer, create_nil,
                                         free_object};
  return &table;
}

std::string format_size(std::size_t bytes) {
  constexpr std::size_t k_mib = std::size_t{1} << 20;
  return bytes % k_mib == 0 ? fmt::format("{} MiB", bytes / k_mib) : fmt::format("{} bytes", bytes);
}

} // namespace

struct ReplyReader::State {
  redisReader* reader = nullptr;
  Budget budget; // the reader's privdata points here, so State never moves

  ~State() {
    if (reader != nullptr) {
      redisReaderFree(reader);
    }
  }
};

ReplyReader::ReplyReader(ReplyLimits limits) : m_state(std::make_unique<State>()) {
  m_state->budget.limits = limits;
  m_state->reader = redisReaderCreateWithFunctions(capped_functions());
  if (m_state->reader == nullptr) {
    throw std::bad_alloc();
  }
  m_state->reader->privdata = &m_state->budget;
}

ReplyReader::~ReplyReader() = default;
ReplyReader::ReplyReader(ReplyReader&&) noexcept = default;
ReplyReader& ReplyReader::operator=(ReplyReader&&) noexcept = default;

void ReplyReader::feed(const char* data, std::size_t len) {
  if (m_state->reader->err != 0) {
    throw RedisError(RedisErrorKind::protocol, "reply stream already broken");
  }
  if (redisReaderFeed(m_state->reader, data, len) != REDIS_OK) {
    throw std::bad_alloc();
  }
  m_state->budget.bytes += len;
}

bool ReplyReader::next(Reply& out) {
  auto& budget = m_state->budget;
  redisReader* reader = m_state->reader;
  void* raw = nullptr;
  if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
    if (budget.over) {
      throw RedisError(RedisErrorKind::protocol,
                       fmt::format("reply too large (over {} values)", budget.limits.values));
    }
    throw RedisError(RedisErrorKind::protocol,
                     fmt::format("unparsable reply from the server ({})", printable(reader->errstr)));
  }
  if (raw == nullptr) {
    // Incomplete. Checked only now, so that a chunk that ends one reply and
    // begins the next is never counted against the first.
    if (budget.bytes > budget.limits.bytes) {
      throw RedisError(RedisErrorKind::protocol,
                       fmt::format("reply too large (over {})", format_size(budget.limits.bytes)));
    }
    return false;
  }
  std::unique_ptr<void, void (*)(void*)> owned(raw, freeReplyObject);
  out = Reply::from_hiredis(*static_cast<redisReply*>(raw));
  // What is left in the buffer belongs to the replies after this one.
  budget.bytes = reader->len - reader->pos;
  budget.values = 0;
  return true;
}

bool ReplyReader::buffered() const {
  // Also true when hiredis has already parsed part of an array out of its buffer.
  return m_state->budget.bytes > 0;
}

Reply Reply::from_hiredis(const redisReply& reply) {
  Reply out;
  switch (reply.type) {
  case REDIS_REPLY_STRING:
    out.type = Type::string;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_STATUS:
    out.type = Type::status;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_ERROR:
    out.type = Type::error;
    out.str.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_INTEGER:
    out.type = Type::integer;
    out.integer = reply.integer;
    break;
  case REDIS_REPLY_ARRAY:
    out.type = Type::array;
    out.elements.reserve(reply.elements);
    for (std::size_t i = 0; i < reply.elements; ++i) {
      out.elements.push_back(from_hiredis(*reply.element[i]));
    }
    break;
  default:
    out.type = Type::nil;
    break;
  }
  return out;
}

long long Reply::as_integer() const {
  if (type == Type::integer) {
    return integer;
  }
  if (type == Type::string || type == Type::status) {
    long long value = 0;
    auto [ptr, ec] = std::from_chars(str.data(), str.data() + str.size(), value);
    if (ec == std::errc() && ptr == str.data() + str.size()) {
      return value;
    }
  }
  throw RedisError(RedisErrorKind::protocol, fmt::format("expected an integer, got {}", summary()));
}

const std::string& Reply::as_string() const {
  if (type == Type::string || type == Type::status) {
    return str;
  }
  throw RedisError(RedisErrorKind::protocol, fmt::format("expected a string, got {}", summary()));
}

std::string Reply::summary() const {
  switch (type) {
  case Type::nil:
    return "(nil)";
  case Type::integer:
    return fmt::format("{}", integer);
  case Type::string:
    return str.size() > 80 ? quote(str.substr(0, 80)) + "..." : quote(str);
  case Type::status:
    return printable(str);
  case Type::error:
    return "(error) " + printable(str);
  case Type::array: {
    // Bounded, as the strings above: a summary may end up in an error message.
    constexpr std::size_t k_shown = 8;
    std::string out = "[";
    for (std::size_t i = 0; i < elements.size() && i < k_shown; ++i) {
      out += (i ? ", " : "") + elements[i].summary();
    }
    if (elements.size() > k_shown) {
      out += fmt::format(", ... {} more", elements.size() - k_shown);
    }
    return out + "]";
  }
  }
  return "?";
}

} // namespace rlock::redis
