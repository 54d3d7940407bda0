// partition(): gamecore JSON bytes -> ordered blocks.
//
// A block is the unit the model encodes independently and the KV cache reuses:
//   id       stable path of what the block holds, e.g. "state.chips.p2",
//            "units[id=hero_7]", "match.{tick..phase}" (a run of merged scalar
//            members, named by its first and last key), "grid[0..63]" (a chunk
//            of scalar array elements). Unique within a partition.
//   text     what gets tokenized: "<path>: <minified JSON>", e.g.
//            state.chips.p2: {"bet":50,"remain":950}
//            Minified means whitespace between tokens removed; tokens
//            themselves (numbers, string escapes) are kept byte for byte.
//   hash     XXH3-64 of text: equal text <=> (almost surely) equal hash.
//   source   byte range of the block's content in the input.
//
// Blocks come in document order. Every input byte the rules keep lies in exactly
// one block's source range; dropped paths appear in no block's text.
//
// Duplicate keys are rejected (ErrorCode::kDuplicateKey): RFC 8259 leaves their
// meaning undefined, engines' serializers disagree on which copy wins, and two
// blocks with one id would make the frame diff ambiguous. A duplicate always
// means a bug in the game's serializer, so we say so instead of guessing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/rules.h"

namespace kvframe::json_blocker {

struct ByteRange {
  std::size_t begin = 0;
  std::size_t end = 0;  // one past the last byte
  std::size_t size() const { return end - begin; }
};

enum class BlockKind : std::uint8_t {
  kValue,       // one JSON value (object member or array element) and all under it
  kMemberRun,   // adjacent scalar members of one object, as a JSON object
  kElementRun,  // adjacent scalar elements of one array, as a JSON array
};

// "value", "member_run", "element_run": for logs and --json output.
const char* block_kind_name(BlockKind kind);

struct Block {
  std::string_view id;
  std::string_view text;
  // RFC 6901 pointer of the value; for runs, of the object or array holding them.
  std::string_view pointer;
  std::uint64_t hash = 0;
  std::uint64_t id_hash = 0;  // XXH3-64 of id, for fast lookups by id
  ByteRange source;
  BlockKind kind = BlockKind::kValue;
  // Length of the "<path>: " prefix inside text; text.substr(prefix_size) is JSON.
  std::uint32_t prefix_size = 0;

  std::string_view json() const { return text.substr(prefix_size); }
};

// The blocks of one frame. Owns the storage its blocks' views point into, so it
// moves but does not copy.
class Partition {
 public:
  Partition() = default;
  Partition(Partition&&) = default;
  Partition& operator=(Partition&&) = default;
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const std::vector<Block>& blocks() const { return blocks_; }
  std::size_t size() const { return blocks_.size(); }
  const Block& operator[](std::size_t i) const { return blocks_[i]; }
  std::size_t input_bytes() const { return input_bytes_; }
  // Sum of block text sizes.
  std::size_t text_bytes() const { return text_bytes_; }
  // Index of the block whose source range holds byte `offset`, or -1.
  long block_at(std::size_t offset) const;

 private:
  friend class Partitioner;
  std::vector<Block> blocks_;
  std::unique_ptr<std::string> arena_;  // ids, texts and pointers; never moves
  std::size_t input_bytes_ = 0;
  std::size_t text_bytes_ = 0;
};

// Reusable partitioning state: the simdjson parser and scratch buffers are kept
// between frames so a steady stream does no per-frame allocation growth.
// Not thread-safe; use one per thread or session.
class Partitioner {
 public:
  explicit Partitioner(Rules rules = {});
  ~Partitioner();
  Partitioner(Partitioner&&) noexcept;
  Partitioner& operator=(Partitioner&&) noexcept;

  const Rules& rules() const;

  // Splits one whole frame. On error no blocks are returned.
  Result<Partition> partition(std::string_view json);
  // Checks that `json` is valid under the limits (UTF-8, syntax, depth, size,
  // duplicate keys) without producing blocks; used for patches.
  Result<std::size_t> validate(std::string_view json);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot convenience: a fresh Partitioner per call.
Result<Partition> partition(std::string_view json, const Rules& rules = {});

}  // namespace kvframe::json_blocker
