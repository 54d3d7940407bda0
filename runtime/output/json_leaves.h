// The two leaves of a compiled schema that carry a payload instead of being
// unrolled into instructions: a string's content and a number within bounds.
// Both are exact: every byte they accept keeps the text a prefix of a valid
// string / in-range number, and their shortest completions are the true ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

// String content after the opening quote, through the closing one, as
// json_chars.h reads it; lengths count code points. With a pattern the
// content is also matched against it (pattern_leaf.h), else the payload
// packs the code points so far and where inside a character the text is.
// kStringStart is the empty content either way.
inline constexpr uint64_t kStringStart = 0;

enum class LeafStep { kDead, kStay, kExit };  // kExit: the closing quote; the leaf is done

LeafStep string_step(const StringSpec& spec, uint64_t& payload, uint8_t byte);
// Bytes to the closing quote included, with single-byte tokens only (kInf if none will do).
int32_t string_min_completion(const StringSpec& spec, uint64_t payload, const ByteSet& single);

// Plain string content (no pattern), most of a free-text mask: a token that
// goes from a character boundary to one, without the closing quote, is
// allowed by length alone, so masks take those tokens by their code point
// count instead of walking them (token_masks.cpp).
bool string_at_boundary(uint64_t payload);
int64_t string_code_points(uint64_t payload);  // so far (saturated at minLength without a maxLength)
// The payload after `code_points` more whole characters from a boundary.
uint64_t string_advance(const StringSpec& spec, uint64_t payload, int64_t code_points);
// The code points `bytes` add as content from a boundary back to one
// (escapes included), or -1 when they cannot: a quote, a control
// character, invalid UTF-8, or a character or escape cut short.
int32_t content_code_points(std::string_view bytes);

// A number -?(0|[1-9][0-9]*)(\.[0-9]+)? (no exponent) with at most
// spec.max_int_digits digits before the point and spec.fraction_digits after.
// The payload is the text so far.
struct NumberOutlook {
  int32_t min_added = kInf;  // characters to the shortest in-range number (0: complete now; kInf: none)
  bool can_extend = false;   // some longer text is still an in-range number
};
NumberOutlook number_outlook(const NumberSpec& spec, std::string_view text);
// Whether `text` is a syntactic prefix of a number the spec allows to be written.
bool number_syntax_ok(const NumberSpec& spec, std::string_view text);

}  // namespace kvframe::runtime::schema
