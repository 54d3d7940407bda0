// Where each block of a frame goes in buffer memory: pure bookkeeping over
// entry ranges, no tensors (assembled_kv.cpp then writes what moved).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kvframe/kv_diff/assembled_kv.h"

namespace kvframe::kv_diff {

// Spare entries a new kSlack slot gets beyond its block's n tokens: a quarter
// more, at least 4, so a block that grows by a few tokens a frame (a score, an
// event log) is rewritten in place instead of moving, and slack costs ~25% of
// memory at most for large blocks.
constexpr int64_t kMinSlack = 4;
int64_t slot_slack(int64_t n);

// kSlack compacts when its used region spans more than this many times what a
// fresh layout (every block with its slack, packed) would take: holes left by
// moved and removed blocks then waste more than slack does.
constexpr double kMaxSpread = 1.5;

struct SlotPlan {
  std::vector<EntryRange> slots;  // per block, in block order; size = capacity
  std::vector<EntryRange> free;   // holes in [begin, end), by offset
  int64_t end = 0;                // high-water mark
  bool compacted = false;
};

// Packs blocks in block order from `begin`, no holes. With slack, each slot
// gets slot_slack() spare entries when all of them fit in capacity, else none.
// The caller checks begin + sum(lengths) <= capacity.
SlotPlan pack_slots(const std::vector<int64_t>& lengths, int64_t begin, int64_t capacity, bool slack);

// kSlack from last frame's state: block i keeps previous[i] (its slot last
// frame) while its length fits; new and outgrown blocks take a hole that fits
// (first fit) or the end of the used region. `free` holds last frame's holes
// plus the slots of removed blocks. Falls back to pack_slots(slack) —
// compacted — when space runs out or the layout spreads past kMaxSpread.
SlotPlan plan_slack(const std::vector<int64_t>& lengths, const std::vector<std::optional<EntryRange>>& previous,
                    std::vector<EntryRange> free, int64_t begin, int64_t end, int64_t capacity);

}  // namespace kvframe::kv_diff
