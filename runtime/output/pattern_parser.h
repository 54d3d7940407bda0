// A JSON Schema `pattern` (ECMA-262 syntax) -> a syntax tree over code
// points. The subset: literal characters; escapes \t \n \v \f \r \0 \xHH
// \uHHHH (a surrogate pair of them is one character) \u{H...} \cX and any
// punctuation escaped; `.` (any character but a line terminator); classes
// [...] [^...] with ranges; \d \w \s and \D \W \S (ASCII digits and word
// characters, ECMA-262's whitespace); groups (...) (?:...) (?<name>...);
// alternation |; quantifiers * + ? {m} {m,} {m,n}, greedy or lazy (the same
// language); anchors ^ and $ (the start and end of the whole value).
// Characters are code points, as with ECMA-262's u flag. Refused as
// kUnsupported: backreferences, lookahead and lookbehind, \b \B, \p{...},
// inline flags. Refused as kInvalid: what ECMA-262 would not parse
// (unbalanced parentheses, nothing to repeat, a range out of order) and
// the characters it only takes literally for old browsers' sake (a lone
// { } or ]: escape them). Errors carry no path: the caller knows it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

struct CodePointRange {
  uint32_t lo, hi;  // inclusive
};

struct PatternNode {
  enum class Kind {
    kEmpty,        // matches the empty string
    kChars,        // one character in `ranges`
    kSequence,     // children one after another
    kAlternation,  // any one child
    kRepeat,       // the child min..max times (max kUnbounded)
    kStart,        // ^: at the start of the value
    kEnd,          // $: at its end
  };
  Kind kind = Kind::kEmpty;
  std::vector<CodePointRange> ranges;  // sorted, disjoint, not adjacent
  std::vector<PatternNode> children;
  int64_t min = 0, max = 0;
};

inline constexpr int kMaxPatternNesting = 64;    // groups inside groups
inline constexpr int64_t kMaxPatternRepeat = 1000;  // m and n of {m,n}

SchemaResult<PatternNode> parse_pattern(std::string_view pattern);

// `text`'s code points; false when it is not UTF-8 (lenient about
// overlong forms: schema strings come checked by simdjson).
bool utf8_code_points(std::string_view text, std::vector<uint32_t>& out);

}  // namespace kvframe::runtime::schema
