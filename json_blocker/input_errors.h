// Locating errors that simdjson reports without a position (internal).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace kvframe::json_blocker::detail {

// Offset of the first byte that does not start or continue a valid UTF-8
// sequence (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF), or
// `size` when the input is valid. Hand-written because simdjson's validator
// answers only yes or no, and a game programmer needs to know where.
std::size_t first_invalid_utf8(const char* data, std::size_t size);

// Offset of the opening quote of a string that is never closed, or `size`.
std::size_t unclosed_string_start(const char* data, std::size_t size);

// A NaN or infinity written as JavaScript writes it (NaN, Infinity,
// -Infinity), which JSON has no syntax for but many serializers emit
// (Python's json.dumps, JavaScript's JSON5 writers): where it stands and the
// JSON Pointer of its value, so the game can find the field it came from.
struct NonFiniteNumber {
  std::size_t offset;
  std::string pointer;  // RFC 6901: "/units/3/hp"
  std::string literal;  // "NaN", "Infinity" or "-Infinity"
};
std::optional<NonFiniteNumber> first_non_finite_number(const char* data, std::size_t size);

}  // namespace kvframe::json_blocker::detail
