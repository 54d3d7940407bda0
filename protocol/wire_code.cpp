#include "kvframe/protocol/wire_code.h"

namespace kvframe::protocol {

fb::ErrorCode wire_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::kContextFull: return fb::ErrorCode::ContextFull;
    case ErrorCode::kUnsatisfiable: return fb::ErrorCode::Unsatisfiable;
    case ErrorCode::kDeviceUnavailable: return fb::ErrorCode::Unsupported;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidRules:  // a session's rules_json
    case ErrorCode::kSchemaNotJson:
    case ErrorCode::kSchemaInvalid:
    case ErrorCode::kSchemaUnsupported:
    case ErrorCode::kSchemaTooComplex: return fb::ErrorCode::BadRequest;
    // A frame or patch the game sent.
    case ErrorCode::kMalformedJson:
    case ErrorCode::kInvalidUtf8:
    case ErrorCode::kTooDeep:
    case ErrorCode::kTooLarge:
    case ErrorCode::kDuplicateKey:
    case ErrorCode::kPatchInvalid:
    case ErrorCode::kPatchPathMissing:
    case ErrorCode::kPatchTestFailed: return fb::ErrorCode::BadJson;
    case ErrorCode::kNoPreviousFrame: return fb::ErrorCode::OutOfOrder;
    // Files, formats, libtorch and the server's own setup: the engine's
    // trouble, not the request's.
    case ErrorCode::kIo:
    case ErrorCode::kTruncated:
    case ErrorCode::kBadMagic:
    case ErrorCode::kUnsupportedVersion:
    case ErrorCode::kCorrupt:
    case ErrorCode::kUnsupportedType:
    case ErrorCode::kUnsupportedArch:
    case ErrorCode::kMissingKey:
    case ErrorCode::kWrongKeyType:
    case ErrorCode::kMissingTensor:
    case ErrorCode::kShapeMismatch:
    case ErrorCode::kUnknownTemplate:
    case ErrorCode::kTokenizer:
    case ErrorCode::kBackend:
    case ErrorCode::kServerConfig:
    case ErrorCode::kServerBind: return fb::ErrorCode::Engine;
  }
  return fb::ErrorCode::Internal;  // not a code of the list: a bug
}

}  // namespace kvframe::protocol
