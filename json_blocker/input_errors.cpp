#include "input_errors.h"

namespace kvframe::json_blocker::detail {

std::size_t first_invalid_utf8(const char* data, std::size_t size) {
  const auto* s = reinterpret_cast<const unsigned char*>(data);
  std::size_t i = 0;
  while (i < size) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return i;
    }
    if (i + n >= size) return i;  // truncated sequence
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k <= n; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += n + 1;
  }
  return size;
}

std::size_t unclosed_string_start(const char* data, std::size_t size) {
  bool in_string = false;
  std::size_t start = size;
  for (std::size_t i = 0; i < size; ++i) {
    if (in_string) {
      if (data[i] == '\\') {
        ++i;
      } else if (data[i] == '"') {
        in_string = false;
      }
    } else if (data[i] == '"') {
      in_string = true;
      start = i;
    }
  }
  return in_string ? start : size;
}

}  // namespace kvframe::json_blocker::detail
