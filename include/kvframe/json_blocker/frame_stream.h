// FrameStream: one game session's frames in, blocks and diffs out.
//
// Frames arrive whole or as patches against the previous frame. Each accepted
// frame is partitioned and diffed against the one before. A frame that fails
// (bad JSON, bad patch) leaves the stream exactly as it was: the previous frame
// stays current and the next frame can still be applied to it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/patch.h"

namespace kvframe::json_blocker {

struct FrameTimings {
  double patch_ms = 0, partition_ms = 0, diff_ms = 0;
};

class FrameStream {
 public:
  explicit FrameStream(Rules rules = {});

  Result<FrameDiff> push_whole(std::string_view json);
  Result<FrameDiff> push_patch(std::string_view patch, PatchFormat format);

  // Frames accepted so far; 0 before the first.
  // The whole text of the current frame (after patches are applied).
  const std::string& text() const { return document_.text(); }
  std::uint64_t frames() const { return frames_; }
  const Partition& current() const { return current_; }
  const Partition& previous() const { return previous_; }
  const FrameTimings& last_timings() const { return timings_; }

 private:
  FrameDiff accept(Partition partition);

  PatchedDocument document_;  // the current frame's whole text, for patches
  Partitioner partitioner_;
  Partition current_, previous_;
  std::uint64_t frames_ = 0;
  FrameTimings timings_;
};

}  // namespace kvframe::json_blocker
