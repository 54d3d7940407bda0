// Locating errors that simdjson reports without a position (internal).
#pragma once

#include <cstddef>

namespace kvframe::json_blocker::detail {

// Offset of the first byte that does not start or continue a valid UTF-8
// sequence (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF), or
// `size` when the input is valid. Hand-written because simdjson's validator
// answers only yes or no, and a game programmer needs to know where.
std::size_t first_invalid_utf8(const char* data, std::size_t size);

// Offset of the opening quote of a string that is never closed, or `size`.
std::size_t unclosed_string_start(const char* data, std::size_t size);

}  // namespace kvframe::json_blocker::detail
