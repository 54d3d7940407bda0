// kvframe-blocks --stream: how much of each frame of a stream must be
// re-encoded, in total, and which paths cause it.
//
// Tokens are estimated from bytes: kvframe-blocks loads no tokenizer, so the
// share of tokens re-encoded is taken to be the share of block text bytes
// re-encoded (the report says so wherever it prints it).
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::tools {

// A block id with every element segment written [*]: units[id=hero_7].pos and
// units[3].pos are both units[*].pos, grid[0..63] is grid[*].
std::string path_pattern(std::string_view id);

struct FrameCost {
  std::string source;  // where the frame came from
  std::size_t blocks = 0, changed = 0, added = 0, removed = 0;
  std::size_t bytes = 0, dirty_bytes = 0;  // block text: all, changed + added

  std::size_t dirty() const { return changed + added; }
};

class StreamStats {
 public:
  // One frame and its diff from the frame before (the first frame: from none).
  void add(std::string source, const json_blocker::Partition& current,
           const json_blocker::FrameDiff& diff);

  std::size_t frames() const { return frames_.size(); }
  void print(std::ostream& out, std::size_t top) const;
  nlohmann::ordered_json to_json(std::size_t top) const;

 private:
  struct PathCost {
    std::size_t frames = 0, blocks = 0, bytes = 0;  // frames it changed in; re-encodes; their bytes
    std::size_t last_frame = 0;                     // for counting each frame once
  };
  struct Totals {
    std::size_t frames = 0, blocks = 0, dirty = 0, bytes = 0, dirty_bytes = 0;
    double max_blocks_share = 0, max_bytes_share = 0;
  };
  // Frames after the first: the first encodes every block once, whatever the rules.
  Totals sum_after_first() const;
  // The `top` paths with the most re-encoded bytes, most first.
  std::vector<std::pair<std::string, PathCost>> top_paths(std::size_t top) const;

  std::vector<FrameCost> frames_;
  std::map<std::string, PathCost> paths_;
};

}  // namespace kvframe::tools
