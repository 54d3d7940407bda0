// Node tree -> byte-level NFA program (Thompson / Pike-VM style). Built
// backwards, compile(node, next) -> entry, so every continuation is shared:
// an object's optional properties cost two chains ("nothing written yet",
// "something written": which decides the comma), a bounded array is
// unrolled, an unbounded one loops. Strings and numbers are single leaf
// instructions whose payload (json_leaves.h) does the counting.
#pragma once

#include <cstdint>
#include <vector>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

struct Inst {
  enum class Op : uint8_t {
    kByte,    // one byte in [lo, hi], then next
    kSplit,   // next and alt both (no priority: the DFA keeps both)
    kString,  // string content and its closing quote (strings[leaf]), then next
    kNumber,  // a number (numbers[leaf]); next once it is complete
    kMatch,   // the whole value
  };
  Op op = Op::kMatch;
  uint8_t lo = 0, hi = 0;
  int32_t next = -1, alt = -1, leaf = -1;
};

struct Program {
  std::vector<Inst> insts;
  std::vector<StringSpec> strings;
  std::vector<NumberSpec> numbers;
  int32_t start = -1;
  // Per pc: the fewest bytes from entering it to the match, each byte one the
  // vocabulary has a single-byte token for (kInf when there is no such way).
  std::vector<int32_t> distance;
};

inline constexpr size_t kMaxProgramSize = 1 << 16;

// Whitespace: one optional space before the value and after every ':' and ','.
// kTooComplex (with the node's path) past max_size instructions; a string's
// pattern is given its tables here (pattern_leaf.h), with their errors.
SchemaResult<Program> compile_program(const Node& root, const ByteSet& single, size_t max_size = kMaxProgramSize);

}  // namespace kvframe::runtime::schema
