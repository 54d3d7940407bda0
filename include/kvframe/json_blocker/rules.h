// Partition rules: how one game's state is cut into blocks.
//
// Rules come from a small JSON file per game (see docs/json_blocker.md for the
// format); every field is optional and defaults to the values below, which suit
// a typical entity-list game state.
//
// Path patterns (pin, drop, quantize, arrays) use the same syntax as block ids, plus wildcards:
//   state.chips.p2        a key path
//   units[id=hero_7]      an array element identified by a key field
//   units[3]              an array element by index
//   units[*]              any element of units
//   state.chips.*         any one segment (key or element)
//   **.timestamp          any number of segments (zero or more)
//   debug_*               '*' inside a key segment globs within the key
//   ["odd key"]           a key that is not a plain identifier, JSON-quoted
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/error.h"

namespace kvframe::json_blocker {

// Hard limits on untrusted input, checked before any block is produced.
struct Limits {
  std::size_t max_document_bytes = 64u << 20;  // 64 MiB
  int max_nesting = 128;                       // objects/arrays inside each other
};

// The order the model reads a frame's blocks in (json_blocker itself always
// cuts and diffs in document order).
enum class BlockOrder {
  kDocument,      // as they stand in the document
  // Blocks that have never changed first, then those that have changed at
  // least once since the session's first frame (or appeared after it), each
  // group in document order; a block stays in the second group once there.
  // For prompt caches that keep a prefix (prefix mode, llama.cpp's prompt
  // cache): a change then invalidates only what follows the stable part.
  kVolatileLast,
};

// Numbers written coarser than the game sends them, so that a block changes
// only where a reader of the state would notice. Applied before a block's text
// is made, so the diff sees the coarse value too.
struct Quantize {
  // Pattern; the rule applies to every number at or below a matching path.
  // Where several rules match a number or its ancestors, the first listed
  // applies: list specific rules before general ones ("**" last).
  std::string path;
  // Exactly one of the two:
  // Round to this many decimals (0..15), to nearest, ties to even; trailing
  // zeros are not written (3.50 -> 3.5). Integers written without a fraction
  // or exponent are kept as they are.
  std::optional<int> round_digits;
  // Strictly ascending, finite edges: a number becomes the largest edge at or
  // below it (below the first edge: the first edge). The model reads "at least
  // this much" in the game's own units, not an index it would need a legend for.
  std::vector<double> levels;
};

// How an array at a path is cut. The array is split whatever its size and
// depth, and its ancestors are split to expose it, as for a pin, so the cut is
// the same from the first frame on.
enum class ArrayCut {
  kRows,      // each element is one block, kept whole (never merged, never split)
  kElements,  // each element is a block of its own (never merged); a big
              // element may still be split by the other rules
  kChunk,     // scalar elements in blocks of `chunk`, aligned to multiples of
              // it: a row-major tile map of width W with chunk W is a block per row
};

struct ArrayRule {
  std::string path;  // pattern; objects at a matching path are left to the other rules
  ArrayCut cut = ArrayCut::kElements;
  std::size_t chunk = 0;  // kChunk only: elements per block, at least 1
};

// "rows", "elements", "chunk".
const char* array_cut_name(ArrayCut cut);

struct Rules {
  // Containers at depth < max_depth (root is depth 0) are split into their
  // children, provided they hold at least one container and are at least
  // min_split_bytes long. Deeper containers stay whole.
  int max_depth = 2;
  std::size_t min_split_bytes = 256;
  // Size budget: any container whose canonical JSON is longer is split,
  // whatever its depth. A single scalar cannot be split and may exceed it.
  std::size_t max_block_bytes = 2048;
  // Adjacent scalar members of a split object (and scalar elements of a split
  // array) merge into one block while each is at most this long and the merged
  // block stays within max_block_bytes.
  std::size_t merge_scalar_bytes = 256;
  // At most this many scalar elements of a split array share one block.
  std::size_t scalar_array_chunk = 64;
  // Fields that identify an element of an array of objects, tried in order.
  // The first one present with a string or integer value gives the element's
  // id (units[id=hero_7]); elements with none are identified by index.
  std::vector<std::string> key_fields = {"id", "name", "uid"};
  // Patterns of paths that are always their own block (never merged into a
  // parent or sibling block, never split for size).
  std::vector<std::string> pin;
  // Patterns of paths removed before blocking: the model never sees them.
  std::vector<std::string> drop;
  // Coarser numbers at some paths (see Quantize).
  std::vector<Quantize> quantize;
  // How arrays at some paths are cut (see ArrayRule); the first matching rule
  // applies.
  std::vector<ArrayRule> arrays;
  BlockOrder order = BlockOrder::kDocument;
  Limits limits;
};

// "document", "volatile_last".
const char* block_order_name(BlockOrder order);

// Parses a rules document. Unknown fields are an error (they are typos).
Result<Rules> parse_rules(std::string_view json);
// Checks ranges and patterns of rules built in code (parse_rules does this
// too). A Partitioner given invalid rules answers every call with this error.
Status check_rules(const Rules& rules);
// Reads and parses a rules file.
Result<Rules> load_rules(const std::string& path);

}  // namespace kvframe::json_blocker
