#include "kvframe/json_blocker/error.h"

namespace kvframe::json_blocker {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kMalformedJson: return "malformed_json";
    case ErrorCode::kInvalidUtf8: return "invalid_utf8";
    case ErrorCode::kTooDeep: return "too_deep";
    case ErrorCode::kTooLarge: return "too_large";
    case ErrorCode::kDuplicateKey: return "duplicate_key";
    case ErrorCode::kPatchInvalid: return "patch_invalid";
    case ErrorCode::kPatchPathMissing: return "patch_path_missing";
    case ErrorCode::kPatchTestFailed: return "patch_test_failed";
    case ErrorCode::kNoPreviousFrame: return "no_previous_frame";
    case ErrorCode::kInvalidRules: return "invalid_rules";
    case ErrorCode::kIo: return "io";
  }
  return "unknown";
}

std::string Error::to_string() const {
  // Rules and I/O errors are not about a position in a frame.
  if (code == ErrorCode::kInvalidRules || code == ErrorCode::kIo) {
    return std::string(error_code_name(code)) + ": " + message;
  }
  return std::string(error_code_name(code)) + " at byte " + std::to_string(offset) + ": " + message;
}

}  // namespace kvframe::json_blocker
