// check_blocks(): does a json_blocker frame diff report exactly the blocks the
// generator changed?
//
// Each changed pointer is located in the frame text the partition was cut
// from (removed ones in the previous frame's) and mapped to the block holding
// that byte. Those blocks must be exactly the ones the diff reports changed,
// added or removed: a block reported without a changed pointer in it would be
// re-encoded for nothing, and a missed one would leave the model stale.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"
#include "moba/moba_stream.h"

namespace kvframe::examples::moba {

struct BlockCheck {
  std::vector<std::string> unreported;   // block ids holding a change, reported unchanged/moved
  std::vector<std::string> unexplained;  // block ids reported dirty/removed, holding no change
  std::vector<std::string> unlocated;    // changed pointers found in no block
  std::size_t mismatches() const { return unreported.size() + unexplained.size() + unlocated.size(); }
};

// `previous_text` and `current_text` are the texts `previous` and `current`
// were partitioned from; `diff` is diff(previous, current).
BlockCheck check_blocks(const std::vector<PathChange>& changes, std::string_view previous_text,
                        const json_blocker::Partition& previous, std::string_view current_text,
                        const json_blocker::Partition& current, const json_blocker::FrameDiff& diff);

}  // namespace kvframe::examples::moba
