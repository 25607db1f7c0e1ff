#include <rlock/lock/lock.hpp>
#include <rlock/lock/record.hpp>

#include <doctest/doctest.h>

using rlock::lock::parse_holder_record;

TEST_CASE("record: rlock's own record is read whole") {
  auto r =
      parse_holder_record(R"({"host":"h1","pid":42,"command":"./deploy.sh","acquired_at_ms":1700000000000,)"
                          R"("ttl_ms":30000,"fence":1700000000123,"version":"0.1.0"})");
  CHECK(r.readable());
  CHECK(r.host == "h1");
  CHECK(r.pid == 42);
  CHECK(r.command == "./deploy.sh");
  CHECK(r.acquired_at_ms == 1700000000000LL);
  CHECK(r.ttl_ms == 30000);
  CHECK(r.fence == 1700000000123LL);
  CHECK(r.version == "0.1.0");
}

TEST_CASE("record: 'turns' is 1 or nothing (the hold's release names the waiters' turns)") {
  CHECK(parse_holder_record(R"({"turns":1})").turns == 1);
  CHECK(parse_holder_record(R"({"turns":1})").readable());
  CHECK_FALSE(parse_holder_record(R"({"turns":2})").turns);
  CHECK_FALSE(parse_holder_record(R"({"turns":true})").turns);
  CHECK_FALSE(parse_holder_record(R"({"turns":"1"})").turns);
  CHECK_FALSE(parse_holder_record(R"({"host":"h"})").turns);
}

TEST_CASE("record: wrong types and nulls leave just those values out") {
  auto r = parse_holder_record(R"({"host":null,"pid":"x","command":123,"fence":7,"version":["a"]})");
  CHECK(r.readable());
  CHECK_FALSE(r.host);
  CHECK_FALSE(r.pid);
  CHECK_FALSE(r.command);
  CHECK_FALSE(r.version);
  CHECK(r.fence == 7);
  r = parse_holder_record(R"({"host":{"a":1},"pid":true,"ttl_ms":"30000","acquired_at_ms":null})");
  CHECK_FALSE(r.readable());
}

TEST_CASE("record: numbers out of range, fractional, huge or negative are not believed") {
  auto r =
      parse_holder_record(R"({"pid":1e300,"fence":-1,"ttl_ms":0,"acquired_at_ms":99999999999999999999})");
  CHECK_FALSE(r.pid);
  CHECK_FALSE(r.fence);
  CHECK_FALSE(r.ttl_ms);
  CHECK_FALSE(r.acquired_at_ms);
  r = parse_holder_record(R"({"pid":4.5,"ttl_ms":31536000001,"fence":18446744073709551615})");
  CHECK_FALSE(r.pid);
  CHECK_FALSE(r.ttl_ms); // over 365 days
  CHECK_FALSE(r.fence);  // over 2^63-1
  r = parse_holder_record(R"({"pid":2147483648,"acquired_at_ms":253402300800000})");
  CHECK_FALSE(r.pid);
  CHECK_FALSE(r.acquired_at_ms); // after year 9999
  // cjson writes large whole numbers as floats: those are kept.
  r = parse_holder_record(R"({"fence":1.700000000123e12,"ttl_ms":30000.0,"pid":7})");
  CHECK(r.fence == 1700000000123LL);
  CHECK(r.ttl_ms == 30000);
  CHECK(r.pid == 7);
}

TEST_CASE("record: anything that is not a JSON object gives an empty record") {
  for (const char* raw :
       {"", "not json", "[1,2,3]", "42", "\"text\"", "null", "{\"host\":", "{\"host\":\"h\"} x"}) {
    CAPTURE(raw);
    auto r = parse_holder_record(raw);
    CHECK_FALSE(r.readable());
  }
  CHECK_FALSE(parse_holder_record(std::string(100'000, '[')).readable());
}

TEST_CASE("record: invalid UTF-8 is unreadable; long strings are cut at a character") {
  CHECK_FALSE(parse_holder_record("{\"host\":\"\xff\xfe\"}").readable());
  std::string long_host = std::string(1023, 'a') + "\xc3\xa9" + std::string(10, 'b'); // é straddles byte 1024
  auto r = parse_holder_record("{\"host\":\"" + long_host + "\"}");
  REQUIRE(r.host);
  CHECK(r.host->size() == 1023);
  r = parse_holder_record("{\"command\":\"" + std::string(5000, 'c') + "\"}");
  REQUIRE(r.command);
  CHECK(r.command->size() == 1024);
}

TEST_CASE("record: the holder's boot id and start time are read when they have the right type") {
  auto r = parse_holder_record(
      R"({"host":"h1","pid":42,"boot_id":"4d1c-aa","start_ticks":123456,"renewed_at_ms":1700000000000})");
  CHECK(r.renewed_at_ms == 1700000000000LL);
  CHECK(r.boot_id == "4d1c-aa");
  CHECK(r.start_ticks == 123456);
  r = parse_holder_record(R"({"boot_id":7,"start_ticks":-1,"renewed_at_ms":"soon"})");
  CHECK_FALSE(r.renewed_at_ms);
  CHECK_FALSE(r.boot_id);
  CHECK_FALSE(r.start_ticks);
  CHECK_FALSE(r.readable());
  r = parse_holder_record(R"({"start_ticks":"123","boot_id":null})");
  CHECK_FALSE(r.start_ticks);
  CHECK_FALSE(r.boot_id);
  r = parse_holder_record(R"({"start_ticks":0})");
  CHECK(r.start_ticks == 0);
  CHECK(r.readable());
}

TEST_CASE("a hash found by SCAN is a lock when it is lock-shaped; a Redisson hold without expiry is one (issue 30)") {
  using rlock::lock::lock_shaped;
  using rlock::lock::redisson_owner_shaped;
  CHECK(redisson_owner_shaped("5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:1"));
  CHECK(redisson_owner_shaped("5D1E7A3C-0B7E-4A47-9B7F-1F0C2A9E8D11:123456789:write"));
  CHECK_FALSE(redisson_owner_shaped("5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:"));
  CHECK_FALSE(redisson_owner_shaped("5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:x"));
  CHECK_FALSE(redisson_owner_shaped("5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d1z:1"));
  CHECK_FALSE(redisson_owner_shaped("5d1e7a3c0b7e-4a47-9b7f-1f0c2a9e8d11-:1"));
  CHECK_FALSE(redisson_owner_shaped("apples"));
  rlock::lock::LockState state;
  state.name = "tn2";
  state.type = rlock::lock::KeyType::hash;
  state.complete = true;
  state.ttl = rlock::Millis(-1);
  state.owners = {{"5d1e7a3c-0b7e-4a47-9b7f-1f0c2a9e8d11:1", 1}};
  CHECK(lock_shaped(state)); // Redisson's, without expiry: the lock --ttl-none is for
  state.owners = {{"apples", 3}};
  CHECK_FALSE(lock_shaped(state)); // a counter without expiry
  state.ttl = rlock::Millis(5000);
  CHECK(lock_shaped(state)); // with a lease, any owner field
  state.owners = {{"apples", 0}};
  CHECK_FALSE(lock_shaped(state)); // a count of 0 is no hold
}
