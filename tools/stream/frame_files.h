// kvframe-stream --write DIR: each frame as generated, its changed pointers and
// the patch that was fed, for inspecting a run or replaying it elsewhere.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "moba/moba_stream.h"

namespace kvframe::tools {

// Writes DIR/frame_NNNN.json and DIR/frame_NNNN.changes.json (a JSON array of
// {"kind","pointer"}); with a non-empty `patch`, also DIR/frame_NNNN.<patch_name>.json.
// Returns an error message, empty on success.
std::string write_frame_files(const std::filesystem::path& dir,
                              const examples::moba::Frame& frame, std::string_view patch_name,
                              std::string_view patch);

}  // namespace kvframe::tools
