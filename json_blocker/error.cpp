#include "kvframe/json_blocker/error.h"

namespace kvframe::json_blocker {

std::string Error::to_string() const {
  // Rules and I/O errors are not about a position in a frame.
  if (code == ErrorCode::kInvalidRules || code == ErrorCode::kIo) {
    return std::string(error_code_name(code)) + ": " + message;
  }
  return std::string(error_code_name(code)) + " at byte " + std::to_string(offset) + ": " + message;
}

}  // namespace kvframe::json_blocker
