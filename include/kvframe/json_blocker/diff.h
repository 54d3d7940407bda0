// diff(): what changed between two consecutive frames' partitions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {

enum class Change : std::uint8_t {
  kUnchanged,  // same id, same text, same relative order
  kChanged,    // same id, different text (re-encode)
  kAdded,      // id only in the current frame
  kRemoved,    // id only in the previous frame
  kMoved,      // same id and text, but its order relative to the other kept
               // blocks changed (it is not on the longest common subsequence)
};

const char* change_name(Change change);

struct BlockChange {
  Change change;
  long previous = -1;  // index in the previous partition, -1 if added
  long current = -1;   // index in the current partition, -1 if removed
};

struct FrameDiff {
  // One entry per current block, in current order, followed by one entry per
  // removed block, in previous order.
  std::vector<BlockChange> blocks;
  std::size_t unchanged = 0, changed = 0, added = 0, removed = 0, moved = 0;
  // Text bytes of changed + added blocks, and of all current blocks.
  std::size_t bytes_changed = 0, bytes_total = 0;

  double changed_fraction() const {
    return bytes_total ? double(bytes_changed) / double(bytes_total) : 0.0;
  }
  // Blocks that must be (re-)encoded: changed + added.
  std::size_t dirty() const { return changed + added; }
};

FrameDiff diff(const Partition& previous, const Partition& current);

}  // namespace kvframe::json_blocker
