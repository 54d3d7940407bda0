// The schema after parsing, before compiling: the subset json_schema.h
// supports as a tree of nodes. Private to kvframe::runtime_output.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvframe/runtime_output/json_schema.h"

namespace kvframe::runtime::schema {

// __extension__: -Wpedantic would flag the type; GCC and Clang both have it.
__extension__ typedef __int128 Int128;

inline Int128 pow10(int n) {
  Int128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// "No completion" in byte counts; small enough that sums of a few never overflow.
inline constexpr int32_t kInf = 1 << 28;
inline constexpr int64_t kUnbounded = -1;
inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Bytes the vocabulary has a single-byte token for: what a shortest completion
// may use, one token per byte.
using ByteSet = std::bitset<256>;

// A number's bounds as integers scaled by 10^fraction_digits, so every
// comparison is exact. integer: fraction_digits 0, up to 19 digits (int64);
// number: at most 15 significant digits in all (a double keeps their order).
struct NumberSpec {
  int fraction_digits = 0;
  int max_int_digits = 19;
  Int128 lo = 0, hi = 0;  // inclusive
};

struct PatternDfa;   // pattern_dfa.h: a `pattern`, vocabulary-free
struct PatternLeaf;  // pattern_leaf.h: the same with lengths and byte costs, per vocabulary

// String content: lengths in code points, and the pattern the content must
// match (set when the program is compiled; null: any content).
struct StringSpec {
  int64_t min = 0;
  int64_t max = kUnbounded;
  std::shared_ptr<const PatternLeaf> pattern;
};

struct Node {
  enum class Kind { kObject, kArray, kString, kNumber, kBoolean, kNull, kLiterals, kAnyOf };
  Kind kind = Kind::kNull;
  std::string path;              // JSON pointer into the schema, for errors
  std::vector<Node> children;    // object: property values; array: the item; anyOf: the alternatives
  std::vector<std::string> texts;  // object: property names as JSON strings; literals: compact JSON values
  std::vector<bool> required;    // object: per property
  int64_t min_items = 0, max_items = kUnbounded;  // array
  StringSpec string;
  std::shared_ptr<const PatternDfa> pattern;  // string: the `pattern` keyword, if any
  NumberSpec number;
};

inline SchemaError schema_error(ErrorCode code, std::string message, std::string path) {
  return SchemaError{code, std::move(message), std::move(path)};
}

}  // namespace kvframe::runtime::schema
