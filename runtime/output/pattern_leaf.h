// The string leaf with a `pattern`: the JSON text is read as characters
// (json_chars.h), each code point steps the pattern's DFA (pattern_dfa.h),
// and code points are counted for minLength / maxLength. So the pattern
// constrains the decoded value: a `"` or `\` in it is written \" or \\, and
// an escape such as \u0041 is the character it stands for.
//
// Exact like the other leaves: a byte is taken only if some completion
// still matches within the lengths, and the shortest completion is counted
// in the bytes the vocabulary can write (raw UTF-8 where it has single-byte
// tokens for them, else an escape). The pattern's states times the counts
// that matter (0..maxLength, or 0..minLength without one) make a table of
// those shortest completions, built once per compiled schema.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "json_leaves.h"
#include "pattern_dfa.h"
#include "schema_nodes.h"

namespace kvframe::runtime::schema {

struct PatternLeaf {
  std::shared_ptr<const PatternDfa> dfa;
  int64_t min = 0, max = kUnbounded;  // code points
  int64_t top_count = 0;              // the counts kept: 0..top_count (without a maxLength, saturated at minLength)
  ByteSet single;
  std::vector<int32_t> interval_bytes;  // the fewest bytes that write a code point of each interval
  // [count * states + state]: the fewest bytes from a character boundary to
  // the end of the string, its closing quote included (kInf: no way).
  std::vector<int32_t> remaining;

  int32_t remaining_at(int64_t count, int32_t state) const {
    return remaining[static_cast<size_t>(count) * static_cast<size_t>(dfa->states()) + static_cast<size_t>(state)];
  }
  int64_t count_after(int64_t count) const { return max == kUnbounded ? std::min(count + 1, top_count) : count + 1; }
};

inline constexpr int64_t kMaxPatternTable = int64_t{1} << 20;  // counts x states entries
inline constexpr int64_t kMaxPatternWork = int64_t{1} << 24;   // counts x transitions, to build it

// kTooComplex when the table would be too large (a long maxLength times a
// large pattern); kInvalid when no string of the lengths matches. No path.
SchemaResult<std::shared_ptr<const PatternLeaf>> make_pattern_leaf(std::shared_ptr<const PatternDfa> dfa, int64_t min,
                                                                   int64_t max, const ByteSet& single);

// The string_step / string_min_completion of json_leaves.h for a string
// with a pattern (they call these). The payload starts at kStringStart.
LeafStep pattern_step(const PatternLeaf& leaf, uint64_t& payload, uint8_t byte);
int32_t pattern_min_completion(const PatternLeaf& leaf, uint64_t payload);

}  // namespace kvframe::runtime::schema
