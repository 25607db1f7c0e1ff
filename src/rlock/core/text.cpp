#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cstdint>

namespace rlock {

namespace {

// Length of the valid UTF-8 sequence starting at bytes[i], or 0.
std::size_t utf8_length(std::string_view bytes, std::size_t i) {
  auto c = static_cast<unsigned char>(bytes[i]);
  std::size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (len == 0 || i + len > bytes.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) {
      return 0;
    }
  }
  return len;
}

} // namespace

std::string printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x80) {
      std::size_t len = utf8_length(bytes, i);
      if (len > 0) {
        out.append(bytes.substr(i, len));
        i += len;
        continue;
      }
      out += fmt::format("\\x{:02x}", c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string quote(std::string_view bytes) {
  return "\"" + printable(bytes) + "\"";
}

std::string random_owner_token() {
  std::array<std::uint8_t, 16> b{};
  std::size_t got = 0;
  while (got < b.size()) {
    ssize_t n = getrandom(b.data() + got, b.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    }
  }
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3F) | 0x80);
  std::string hex;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      hex += '-';
    }
    hex += fmt::format("{:02x}", b[i]);
  }
  return fmt::format("{}:{}", hex, getpid());
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) {
    return "unknown";
  }
  return buf.data();
}

} // namespace rlock
