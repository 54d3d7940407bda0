// A JSON string's content read one byte at a time, as the characters it
// decodes to: strict UTF-8 (Unicode's table 3-7: no overlongs, surrogates
// or code points past U+10FFFF), no raw control characters, and the escapes
// \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate only as a pair), each one
// code point. Both string leaves read through it: plain content only needs
// to know where a character ends, a pattern (pattern_leaf.h) also needs
// which code point it was.
#pragma once

#include <cstdint>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

// Where inside a character the text is. The UTF-8 states name the range the
// next continuation byte must fall in.
enum CharSub : uint8_t {
  kNormal,     // between characters
  kCont1,      // 1 more continuation byte, 80..BF
  kCont2,      // 2 more, the next 80..BF
  kCont3,      // 3 more, the next 80..BF
  kAfterE0,    // 2 more, the next A0..BF (no overlong 3-byte forms)
  kAfterED,    // 2 more, the next 80..9F (no surrogates)
  kAfterF0,    // 3 more, the next 90..BF (no overlong 4-byte forms)
  kAfterF4,    // 3 more, the next 80..8F (nothing past U+10FFFF)
  kEscape,     // after a backslash
  kHex0,       // \u and 0..3 hex digits
  kHex1,
  kHex2,
  kHex3,
  kHighBackslash,  // after a high surrogate escape: its low half must follow
  kHighU,
  kLowHex0,    // the low half: D, then C..F, then two more
  kLowHex1,
  kLowHex2,
  kLowHex3,
};

// value: the bits decoded so far (UTF-8 payload bits, \u digits, or a high
// surrogate's 10 bits and the low half's digits). Never wider than 16 bits.
struct CharState {
  CharSub sub = kNormal;
  uint16_t value = 0;
};

enum class CharStep {
  kDead,     // the byte cannot come here
  kPartial,  // inside a character
  kChar,     // a character is complete: its code point is given
  kQuote,    // the closing quote (only between characters)
};
CharStep char_step(CharState& state, uint8_t byte, uint32_t& code_point);

// Whether the \u digits so far (n of them) begin a high surrogate, which
// needs its low half after it.
bool high_surrogate_prefix(uint16_t hex, int n);

// The fewest bytes, each one the vocabulary has a single-byte token for,
// that end the current character (0 between characters; kInf if none will do).
int32_t char_finish_bytes(const CharState& state, const ByteSet& single);

// The fewest such bytes from `state` to the end of a character whose code
// point is in [lo, hi] (a whole character when between characters; kInf if
// none): raw UTF-8 where the vocabulary can write it, else an escape.
int32_t cheapest_char(const CharState& state, uint32_t lo, uint32_t hi, const ByteSet& single);

// The code points a character begun in `state` can still end as lie in
// [lo, hi] (not every one of them need be reachable). Not between characters.
struct CodePointHull {
  uint32_t lo, hi;
};
CodePointHull reachable_hull(const CharState& state);

}  // namespace kvframe::runtime::schema
