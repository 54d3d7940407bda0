// The frames of kvframe-blocks --stream, one at a time: a JSONL file (one
// frame per line; - for standard input) or a folder of frame files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kvframe/json_blocker/error.h"

namespace kvframe::tools {

class FrameSource {
 public:
  // A folder: every *.json file in it, in name order (frame_0002.json before
  // frame_0010.json when numbers are zero-padded). Anything else: JSONL, blank
  // lines skipped, a trailing '\r' removed. Errors are ErrorCode::kIo.
  static json_blocker::Result<FrameSource> open(const std::string& path);

  // Reads the next frame into `frame` and names where it came from in
  // `where` ("frames.jsonl:7", "frames/frame_0006.json"); false at the end.
  json_blocker::Result<bool> next(std::string& frame, std::string& where);

 private:
  std::string name_;                // how messages name the input
  std::string lines_;               // JSONL: the whole input
  std::size_t offset_ = 0, line_ = 0;
  bool folder_ = false;
  std::vector<std::string> files_;  // a folder: its frame files, sorted
  std::size_t next_file_ = 0;
};

}  // namespace kvframe::tools
