#include <rlock/redis/slots.hpp>

namespace rlock::redis {

namespace {

std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (char ch : data) {
    crc = static_cast<std::uint16_t>(crc ^ (static_cast<std::uint8_t>(ch) << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

} // namespace

std::uint16_t hash_slot(std::string_view key) {
  auto open = key.find('{');
  if (open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return static_cast<std::uint16_t>(crc16_xmodem(key) % k_cluster_slots);
}

} // namespace rlock::redis
