#pragma once

#include <cstdint>
#include <string_view>

namespace rlock::redis {

inline constexpr int k_cluster_slots = 16384;

// Redis Cluster hash slot of a key (CRC16/XMODEM mod 16384, honouring {hash tags}).
std::uint16_t hash_slot(std::string_view key);

} // namespace rlock::redis
