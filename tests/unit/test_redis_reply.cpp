#include <rlock/redis/errors.hpp>
#include <rlock/redis/reply.hpp>

#include <doctest/doctest.h>

#include <string>

using rlock::RedisError;
using rlock::RedisErrorKind;
using rlock::redis::Reply;
using rlock::redis::ReplyLimits;
using rlock::redis::ReplyReader;

namespace {

void feed(ReplyReader& reader, const std::string& bytes) {
  reader.feed(bytes.data(), bytes.size());
}

// The message of the protocol error that reading `bytes` throws, or "" if none.
std::string protocol_error(ReplyReader& reader, const std::string& bytes) {
  try {
    feed(reader, bytes);
    Reply reply;
    while (reader.next(reply)) {
    }
  } catch (const RedisError& e) {
    CHECK(e.kind() == RedisErrorKind::protocol);
    CHECK(e.outcome() == rlock::Outcome::failed);
    return e.what();
  }
  return "";
}

std::string ints(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += ":1\r\n";
  }
  return out;
}

} // namespace

TEST_CASE("replies fed in pieces come out whole and in order") {
  ReplyReader reader;
  const std::string wire = "*3\r\n:1\r\n$3\r\nabc\r\n*-1\r\n+OK\r\n-ERR x\r\n$-1\r\n";
  Reply reply;
  std::vector<Reply> replies;
  for (char c : wire) {
    reader.feed(&c, 1);
    while (reader.next(reply)) {
      replies.push_back(reply);
    }
  }
  REQUIRE(replies.size() == 4);
  CHECK(replies[0].summary() == "[1, \"abc\", (nil)]");
  CHECK(replies[1].str == "OK");
  CHECK(replies[2].type == Reply::Type::error);
  CHECK(replies[3].is_nil());
  CHECK_FALSE(reader.buffered());
}

TEST_CASE("buffered() is true from the first byte of a reply until it is returned") {
  ReplyReader reader;
  CHECK_FALSE(reader.buffered());
  feed(reader, "*2\r\n:1\r\n");
  Reply reply;
  CHECK_FALSE(reader.next(reply));
  CHECK(reader.buffered()); // hiredis has parsed ":1" out of its buffer already
  feed(reader, ":2\r\n");
  CHECK(reader.next(reply));
  CHECK_FALSE(reader.buffered());
}

TEST_CASE("an array header over the value limit is refused before anything is allocated") {
  ReplyReader reader;
  // Just under hiredis's own INT_MAX check: without the cap, a 16 GB element table.
  CHECK(protocol_error(reader, "*2000000000\r\n") == "reply too large (over 1048576 values)");
  ReplyReader over_int;
  CHECK(protocol_error(over_int, "*3000000000\r\n").starts_with("unparsable reply from the server"));
  ReplyReader negative;
  CHECK(protocol_error(negative, "*-5\r\n").starts_with("unparsable reply from the server"));
}

TEST_CASE("the value limit counts every value of a reply, nested ones included") {
  ReplyLimits limits;
  limits.values = 10;
  SUBCASE("exactly at the limit") {
    ReplyReader reader(limits);
    CHECK(protocol_error(reader, "*9\r\n" + ints(9)).empty());
  }
  SUBCASE("a header one over") {
    ReplyReader reader(limits);
    CHECK(protocol_error(reader, "*10\r\n") == "reply too large (over 10 values)");
  }
  SUBCASE("small arrays that add up") {
    ReplyReader reader(limits);
    std::string inner = "*3\r\n" + ints(3); // 4 values
    CHECK(protocol_error(reader, "*3\r\n" + inner + inner + inner) == "reply too large (over 10 values)");
  }
  SUBCASE("the count starts again with each reply") {
    ReplyReader reader(limits);
    CHECK(protocol_error(reader, "*9\r\n" + ints(9) + "*9\r\n" + ints(9) + "*9\r\n" + ints(9)).empty());
  }
}

TEST_CASE("the byte limit counts what was received for the reply being read") {
  ReplyLimits limits;
  limits.bytes = 1000;
  SUBCASE("an endless bulk string") {
    ReplyReader reader(limits);
    CHECK(protocol_error(reader, "$9000000000\r\n" + std::string(900, 'x')).empty());
    CHECK(protocol_error(reader, std::string(100, 'x')) == "reply too large (over 1000 bytes)");
  }
  SUBCASE("a chunk that ends one reply and starts the next counts only for the next") {
    ReplyReader reader(limits);
    std::string first = "$980\r\n" + std::string(980, 'a') + "\r\n"; // 992 bytes
    std::string second = "$500\r\n" + std::string(500, 'b') + "\r\n";
    feed(reader, first + second.substr(0, 300));
    Reply reply;
    CHECK(reader.next(reply));
    CHECK(reply.str.size() == 980);
    CHECK_FALSE(reader.next(reply));
    feed(reader, second.substr(300));
    CHECK(reader.next(reply));
    CHECK(reply.str.size() == 500);
  }
  SUBCASE("the default is 64 MiB") {
    ReplyReader reader;
    std::string chunk(1 << 20, 'x');
    feed(reader, "$9000000000\r\n");
    std::string error;
    for (int i = 0; i < 70 && error.empty(); ++i) {
      error = protocol_error(reader, chunk);
    }
    CHECK(error == "reply too large (over 64 MiB)");
  }
}

TEST_CASE("bytes that are not RESP are a protocol error naming hiredis's complaint") {
  ReplyReader reader;
  CHECK(protocol_error(reader, "GARBAGE\r\n") ==
        "unparsable reply from the server (Protocol error, got \\\"G\\\" as reply type byte)");
}

TEST_CASE("a reply's summary stays short") {
  Reply array;
  array.type = Reply::Type::array;
  array.elements.resize(100);
  CHECK(array.summary() == "[(nil), (nil), (nil), (nil), (nil), (nil), (nil), (nil), ... 92 more]");
  Reply text;
  text.type = Reply::Type::string;
  text.str = std::string(1000, 'x');
  CHECK(text.summary().size() < 100);
}
