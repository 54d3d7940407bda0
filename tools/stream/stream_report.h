// What kvframe-stream prints: one row per frame, then a summary, either as an
// aligned table or as one JSON object per line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace kvframe::tools {

struct FrameRow {
  std::uint64_t frame = 0;
  std::size_t bytes = 0;      // the whole frame
  std::size_t fed_bytes = 0;  // what was pushed: the whole frame or the patch
  std::size_t blocks = 0;
  std::size_t unchanged = 0, changed = 0, added = 0, removed = 0, moved = 0;
  double changed_percent = 0;  // of block text bytes
  double patch_ms = 0, partition_ms = 0, diff_ms = 0;
  std::size_t changes = 0;     // the generator's changed pointers
  std::size_t mismatches = 0;  // see moba::check_blocks
};

class StreamReport {
 public:
  StreamReport(std::FILE* out, bool json) : out_(out), json_(json) {}

  void add(const FrameRow& row);
  // Prints the summary; frame 0 (everything added) is left out of the change
  // statistics, which describe steady-state frames.
  void finish(double wall_ms) const;
  std::size_t mismatches() const { return mismatches_; }

 private:
  void print_header() const;

  std::FILE* out_;
  bool json_;
  std::size_t frames_ = 0, later_frames_ = 0, mismatches_ = 0;
  double blocks_ = 0, dirty_ = 0, changed_percent_ = 0, blocker_ms_ = 0;
};

}  // namespace kvframe::tools
