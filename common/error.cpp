#include "kvframe/common/error.h"

namespace kvframe::runtime {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo: return "io";
    case ErrorCode::kTruncated: return "truncated";
    case ErrorCode::kBadMagic: return "bad_magic";
    case ErrorCode::kUnsupportedVersion: return "unsupported_version";
    case ErrorCode::kCorrupt: return "corrupt";
    case ErrorCode::kUnsupportedType: return "unsupported_type";
    case ErrorCode::kUnsupportedArch: return "unsupported_arch";
    case ErrorCode::kMissingKey: return "missing_key";
    case ErrorCode::kWrongKeyType: return "wrong_key_type";
    case ErrorCode::kMissingTensor: return "missing_tensor";
    case ErrorCode::kShapeMismatch: return "shape_mismatch";
    case ErrorCode::kUnknownTemplate: return "unknown_template";
    case ErrorCode::kTokenizer: return "tokenizer";
    case ErrorCode::kDeviceUnavailable: return "device_unavailable";
    case ErrorCode::kContextFull: return "context_full";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kBackend: return "backend";
    case ErrorCode::kBadSchema: return "bad_schema";
    case ErrorCode::kUnsatisfiable: return "unsatisfiable";
  }
  return "unknown";
}

std::string Error::to_string() const {
  return std::string(error_code_name(code)) + ": " + message;
}

}  // namespace kvframe::runtime
