#include "input_errors.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "path.h"

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

namespace {

// Where the scan stands in the document: each open container, and for an
// object the key of the member being read.
struct Level {
  bool object = false;
  bool expecting_key = false;
  std::string key;
  std::size_t index = 0;
};

std::string pointer_of(const std::vector<Level>& levels) {
  std::string out;
  for (const Level& level : levels) {
    if (level.object) {
      append_pointer_key(out, level.key);
    } else {
      append_pointer_index(out, level.index);
    }
  }
  return out;
}

bool starts_with(const char* data, std::size_t size, std::size_t at, const char* word) {
  const std::size_t n = std::strlen(word);
  return at + n <= size && std::memcmp(data + at, word, n) == 0;
}

}  // namespace

std::optional<NonFiniteNumber> first_non_finite_number(const char* data, std::size_t size) {
  std::vector<Level> levels;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = data[i];
    if (c == '"') {
      const std::size_t start = ++i;
      while (i < size && data[i] != '"') i += data[i] == '\\' ? 2 : 1;
      if (!levels.empty() && levels.back().object && levels.back().expecting_key) {
        // Escapes are kept as written: a key that needs them is rare in a gamecore.
        levels.back().key.assign(data + start, std::min(i, size) - start);
        levels.back().expecting_key = false;
      }
    } else if (c == '{' || c == '[') {
      levels.push_back({c == '{', c == '{', "", 0});
    } else if (c == '}' || c == ']') {
      if (!levels.empty()) levels.pop_back();
    } else if (c == ',' && !levels.empty()) {
      levels.back().expecting_key = levels.back().object;
      ++levels.back().index;
    } else {
      for (const char* literal : {"NaN", "Infinity", "-Infinity"}) {
        if (starts_with(data, size, i, literal)) return NonFiniteNumber{i, pointer_of(levels), literal};
      }
    }
  }
  return std::nullopt;
}

}  // namespace kvframe::json_blocker::detail
