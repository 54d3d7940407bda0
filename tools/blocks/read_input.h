// Reading a whole input file, or standard input when the path is "-".
#pragma once

#include <string>

#include "kvframe/json_blocker/error.h"

namespace kvframe::tools {

// Returns the file's bytes, or an ErrorCode::kIo error naming the path and the
// system's reason (missing file, permission, a directory, ...).
json_blocker::Result<std::string> read_input(const std::string& path);

// How read_input() names `path` in messages: "<stdin>" for "-".
std::string input_name(const std::string& path);

}  // namespace kvframe::tools
