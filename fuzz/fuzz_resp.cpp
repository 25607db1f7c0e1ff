// RESP bytes through rlock's ReplyReader (hiredis's reader with rlock's caps),
// as a connection reads them: fed whole, and fed in pieces (the first byte is
// the piece size) must give the same replies; every accessor of every value.

#include "fuzz.hpp"

using namespace rlock;

namespace {

// The replies of `wire` fed `piece` bytes at a time, and whether the reader
// refused it.
std::vector<redis::Reply> read_in_pieces(std::string_view wire, std::size_t piece, bool& refused) {
  std::vector<redis::Reply> out;
  refused = false;
  try {
    redis::ReplyReader reader;
    redis::Reply reply;
    for (std::size_t at = 0; at < wire.size(); at += piece) {
      std::string_view part = wire.substr(at, piece);
      reader.feed(part.data(), part.size());
      while (reader.next(reply)) {
        out.push_back(std::move(reply));
      }
    }
  } catch (const RedisError&) {
    refused = true;
  }
  return out;
}

bool same(const redis::Reply& a, const redis::Reply& b) {
  if (a.type != b.type || a.integer != b.integer || a.str != b.str || a.elements.size() != b.elements.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    if (!same(a.elements[i], b.elements[i])) {
      return false;
    }
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  std::size_t piece = static_cast<std::size_t>(data[0] % 16) + 1;
  std::string_view wire = fuzz::bytes(data + 1, size - 1);
  bool refused_whole = false, refused_pieces = false;
  auto whole = read_in_pieces(wire, wire.size() + 1, refused_whole);
  auto pieces = read_in_pieces(wire, piece, refused_pieces);
  // The same replies, and the same refusal after them, however the bytes arrive.
  FUZZ_CHECK(refused_whole == refused_pieces);
  FUZZ_CHECK(whole.size() == pieces.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    FUZZ_CHECK(same(whole[i], pieces[i]));
  }
  for (const auto& reply : whole) {
    fuzz::walk(reply);
  }
  return 0;
}
