// A session's assembled KV buffer: the system prompt, then the frame's blocks
// at contiguous positions in block order, then the query — one KvCache that
// Model::forward appends to.
//
//   kv.reset();
//   model.forward(system_tokens, kv.cache());  kv.seal_prefix();
//   per frame:
//     kv.assemble(blocks);                      // blocks: stored encodings, in order
//     model.forward(query_tokens, kv.cache());  // + decoded tokens
//     kv.truncate_to_assembly();                // drop the query before the next frame
//
// Placing a block at position p writes its keys rotated by RoPE to positions
// p .. p+n-1 (one rotation from the stored un-rotated keys, never a rotation of
// an already rotated key) and copies its values. Entries are memory; positions
// come from RoPE alone, so blocks need not lie in memory in block order and
// the buffer may hold slack between them: cache().padding masks every entry in
// [prefix, length) that no block covers (and is undefined when none is left).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "kvframe/kv_diff/block_store.h"
#include "kvframe/common/error.h"
#include "kvframe/kv_core/kv_cache.h"
#include "kvframe/kv_core/rope.h"

namespace kvframe::kv_diff {

struct Placement;  // one block's write into the buffer (placement.h)

// How blocks map to buffer entries (see kv_diff/README.md).
//   kCompact: packed in block order; a block that changes length rewrites
//             (K and V) every block after it.
//   kSlack:   each block keeps its slot, with spare entries to grow into,
//             across frames; a block after a changed one only has its keys
//             re-rotated in place. Compacts when space runs out or fragments.
enum class Layout { kSlack, kCompact };
const char* layout_name(Layout layout);                     // "slack", "compact"
std::optional<Layout> parse_layout(std::string_view name);  // nullopt for anything else

// One block of a frame: id is json_blocker's stable id hash (a block whose
// content changes keeps its id, which is what lets it keep its slot).
struct PlacedBlock {
  uint64_t id = 0;
  BlockRef kv;
};

struct AssembleStats {
  int64_t blocks = 0;
  int64_t blocks_kept = 0;     // untouched: same content, entries and position
  int64_t blocks_written = 0;  // K rotated and V copied
  int64_t blocks_rotated = 0;  // moved position only: K re-rotated in place, V untouched
  int64_t tokens_written = 0, tokens_rotated = 0;
  int64_t bytes_written = 0;   // K and V bytes stored into the buffer
  bool compacted = false;      // kSlack: every block was laid out afresh this frame
  double ms = 0;               // host time (on CUDA: until the work is queued)
};

// A run of buffer entries.
struct EntryRange {
  int64_t offset = 0, size = 0;
  int64_t end() const { return offset + size; }
};

// Where a block lies (for tests and diagnostics).
struct SlotInfo {
  uint64_t id = 0;
  int64_t offset = 0;    // first entry
  int64_t capacity = 0;  // entries reserved: length + slack
  int64_t position = 0;  // first RoPE position
  int64_t length = 0;    // tokens
};

class AssembledKv {
 public:
  // A buffer of `shape` (a model's kv_shape()) whose blocks are re-rotated
  // with `rope` (the model's). capacity: the most entries the buffer may hold; initial_capacity (0: all of capacity) is what
  // it allocates now, growing (doubling) when a frame or reserve() needs more
  // — a session that asked for a large context pays for what it uses.
  // kInvalidArgument for capacity < 1; kBackend when the memory cannot be had.
  static Result<AssembledKv> create(const runtime::KvShape& shape, const runtime::Rope& rope, int64_t capacity,
                                    Layout layout, int64_t initial_capacity = 0);

  AssembledKv(AssembledKv&&) = default;
  AssembledKv& operator=(AssembledKv&&) = default;

  // The cache Model::forward reads and appends to. Its k[l], v[l] are views
  // of one K and one V tensor [n_layer, n_head_kv, capacity, head_dim].
  runtime::KvCache& cache() { return cache_; }
  const runtime::KvCache& cache() const { return cache_; }
  Layout layout() const { return layout_; }

  // Empties the buffer: no prefix, no blocks.
  void reset();
  // Entries written so far, [0, cache().length), become the fixed prefix;
  // blocks take positions from cache().next_position. Forgets any blocks.
  void seal_prefix();
  // Lays the frame's blocks out and sets length (high_water()), next_position
  // (prefix positions + tokens()) and padding. Blocks must match the buffer's
  // shapes, be non-empty and have distinct ids (kInvalidArgument otherwise);
  // kContextFull when prefix and blocks exceed the capacity; kBackend when
  // libtorch or CUDA fails (the buffer then forgets its blocks: the next
  // assemble writes all of them).
  Result<AssembleStats> assemble(const std::vector<PlacedBlock>& blocks);
  // Writes the assembled blocks from the `first`-th on afresh from their
  // stored encodings (K rotated to their positions, V copied), undoing what
  // was written over their entries since (the block engine's recomputation
  // in context, which a later frame must start again from the blocks' own
  // KV). kBackend when libtorch or CUDA fails (the buffer then forgets its
  // blocks, as assemble() does).
  Status restore(size_t first);
  // Drops every token appended after the last assemble (or seal_prefix).
  void truncate_to_assembly();
  // Makes room for at least `entries` (what cache() holds is kept).
  // kContextFull past max_capacity(); kBackend when the memory cannot be had.
  Status reserve(int64_t entries);
  int64_t max_capacity() const { return max_capacity_; }

  int64_t prefix_length() const { return prefix_length_; }  // entries (= positions) of the prefix
  int64_t tokens() const;                                    // block tokens now assembled
  int64_t high_water() const { return high_water_; }         // end of the last slot in memory
  std::vector<SlotInfo> slots() const;                       // in block order
  // The RoPE position of every entry of [0, cache().length), int64 on the
  // buffer's device: the prefix's in order (ending at its last position),
  // the blocks' from their slots, INT64_MAX for a gap (an entry nothing may
  // see; Model::recompute reads these), and entries appended after the last
  // assembly from the assembly's next position on.
  at::Tensor entry_positions() const;

 private:
  struct Slotted {
    uint64_t id;
    BlockRef kv;
    EntryRange slot;  // size: the slot's capacity
    int64_t position;
  };

  AssembledKv(at::Tensor k, at::Tensor v, runtime::Rope rope, Layout layout, int64_t max_capacity);
  void bind_cache();  // cache_'s views and padding over k_, v_
  Status check_blocks(const std::vector<PlacedBlock>& blocks) const;
  void set_padding();
  // Applies the writes; on failure forgets every block and says why.
  Status place(const std::vector<Placement>& placements);

  at::Tensor k_, v_;  // [n_layer, n_head_kv, capacity, head_dim]
  at::Tensor padding_;  // bool [capacity]: cache_.padding when the buffer has gaps
  runtime::KvCache cache_;
  runtime::Rope rope_;
  Layout layout_;
  int64_t max_capacity_ = 0;
  int64_t prefix_length_ = 0, prefix_position_ = 0;
  int64_t high_water_ = 0;
  std::vector<Slotted> blocks_;  // block order
  std::vector<EntryRange> free_; // holes between slots in [prefix, high water), by offset
};

}  // namespace kvframe::kv_diff
