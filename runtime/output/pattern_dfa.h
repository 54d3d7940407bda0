// A `pattern` as a DFA over code points. The syntax tree (pattern_parser.h)
// is compiled backwards into a Thompson NFA, as schema_program.h does for
// the schema, then determinized eagerly: patterns are small, and the string
// leaf (pattern_leaf.h) needs every state's shortest ways to the end before
// decoding starts. The alphabet is cut into intervals of code points that
// no class of the pattern tells apart, so a state's row has a few entries.
//
// Unanchored, as JSON Schema has it: the pattern may match anywhere in the
// value. An implicit [\s\S]* runs before it (^ holds only at the start),
// and once it has matched with no $ pending, anything may follow (the
// state that says so loops on every character).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

struct PatternDfa {
  static constexpr int32_t kNone = -1;  // no continuation can match

  // Interval i is [starts[i], starts[i + 1]) (the last one through U+10FFFF).
  std::vector<uint32_t> interval_starts;
  // [state * intervals() + i]: the state after a code point of interval i,
  // or kNone (also for surrogates, which no JSON string decodes to). State 0
  // is the start; every state can still reach an accepting one.
  std::vector<int32_t> next;
  std::vector<uint8_t> accepting;  // the value may end here

  int32_t states() const { return static_cast<int32_t>(accepting.size()); }
  int32_t intervals() const { return static_cast<int32_t>(interval_starts.size()); }
  int32_t interval_of(uint32_t code_point) const;
  uint32_t interval_last(int32_t interval) const;
  int32_t target(int32_t state, int32_t interval) const {
    return next[static_cast<size_t>(state) * interval_starts.size() + static_cast<size_t>(interval)];
  }
  int32_t step(int32_t state, uint32_t code_point) const { return target(state, interval_of(code_point)); }
  // Whether a decoded string (UTF-8) matches: how enum and const values are checked.
  bool matches(std::string_view utf8) const;
};

inline constexpr int32_t kMaxPatternStates = 4096;
inline constexpr size_t kMaxPatternInstructions = size_t{1} << 15;
inline constexpr size_t kMaxPatternTransitions = size_t{1} << 22;  // states x intervals
inline constexpr int64_t kMaxPatternSteps = int64_t{1} << 26;      // NFA instructions visited while determinizing

// Parses (pattern_parser.h) and determinizes. kTooComplex past the limits
// above; kInvalid when no string matches. Errors carry no path.
SchemaResult<std::shared_ptr<const PatternDfa>> compile_pattern(std::string_view pattern);

}  // namespace kvframe::runtime::schema
