// What kvframe-blocks prints: one frame's blocks, or the diff of two frames,
// as an aligned table for people or as one JSON document for scripts. Both
// forms carry the same fields.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::tools {

void print_blocks(std::ostream& out, const json_blocker::Partition& frame);
// The blocks' texts, one line each: what the model reads of the frame.
void print_block_texts(std::ostream& out, const json_blocker::Partition& frame);
// with_text: each block's text too.
nlohmann::ordered_json blocks_json(const json_blocker::Partition& frame, bool with_text = false);

// Lists every block that is not unchanged, then the counts.
void print_diff(std::ostream& out, const json_blocker::Partition& previous,
                const json_blocker::Partition& current, const json_blocker::FrameDiff& diff);
nlohmann::ordered_json diff_json(const json_blocker::Partition& previous,
                                 const json_blocker::Partition& current,
                                 const json_blocker::FrameDiff& diff);

}  // namespace kvframe::tools
