#include "byte_unicode.h"

#include <array>

#include "utf8.h"

namespace kvframe::runtime::byte_unicode {
namespace {

bool stands_for_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<std::string, 256> char_for_byte;
  std::array<int16_t, 0x144> byte_for_cp;  // -1: no byte; the highest code point used is U+0143

  Tables() {
    byte_for_cp.fill(-1);
    uint32_t next_shifted = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = stands_for_itself(b) ? static_cast<uint32_t>(b) : next_shifted++;
      utf8::append(char_for_byte[static_cast<std::size_t>(b)], cp);
      byte_for_cp[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view char_for_byte(uint8_t b) { return tables().char_for_byte[b]; }

bool append_bytes(std::string_view token_text, std::string& out) {
  const Tables& t = tables();
  std::string bytes;
  bytes.reserve(token_text.size());
  for (std::size_t i = 0; i < token_text.size();) {
    // Every mapped character is U+0000..U+0143: one or two UTF-8 bytes.
    const auto b0 = static_cast<uint8_t>(token_text[i]);
    uint32_t cp;
    if (b0 < 0x80) {
      cp = b0;
      i += 1;
    } else if ((b0 & 0xE0) == 0xC0 && i + 1 < token_text.size() &&
               utf8::sequence_length(token_text, i) == 2) {
      cp = ((b0 & 0x1Fu) << 6) | (static_cast<uint8_t>(token_text[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return false;
    }
    if (cp >= t.byte_for_cp.size() || t.byte_for_cp[cp] < 0) return false;
    bytes += static_cast<char>(t.byte_for_cp[cp]);
  }
  out += bytes;
  return true;
}

}  // namespace kvframe::runtime::byte_unicode
