// The frames the benchmarks run on, made by the sample-data generators.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kvframe/json_blocker/rules.h"

namespace kvframe::bench {

struct Workload {
  std::string name;
  json_blocker::Rules rules;  // the rules shipped with the generator
  // Consecutive whole frames. frames[0] and frames[1] are "previous" and
  // "current" for the single-frame benchmarks.
  std::vector<std::string> frames;
  // patches[i] turns frames[i] into frames[i + 1]; empty when the generator
  // makes no patches.
  std::vector<std::string> merge_patches, json_patches;

  const std::string& previous() const { return frames[0]; }
  const std::string& current() const { return frames[1]; }
};

// A MOBA stream of `transitions` + 1 frames, the first about `frame_bytes` long.
Workload moba_workload(std::size_t frame_bytes, std::size_t transitions);
// The Hold'em pair of the Block-attention paper's Figure 5 (one block changes).
Workload holdem_workload();

}  // namespace kvframe::bench
