#include "byte_level_text.h"

#include <cstdint>

namespace kvframe::test {

std::string byte_level_text(std::string_view bytes) {
  // GPT-2's table, written out independently of the library's.
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    const bool itself = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    uint32_t cp = b;
    if (!itself) {
      uint32_t shifted = 0;
      for (uint32_t x = 0; x < b; ++x) {
        const bool x_itself = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
        if (!x_itself) ++shifted;
      }
      cp = 0x100 + shifted;
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

}  // namespace kvframe::test
