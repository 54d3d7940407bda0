// kvframe's one list of errors: every library (the runtime, json_blocker, the
// output schemas, the server) fails with an ErrorCode from here, and each code
// has one stable name and one meaning (error_code_name, error_message), like
// simdjson's error_code. The wire's codes and the C ABI's kvf_status are the
// protocol's own list; kvframe::protocol::wire_code maps this one onto it.
//
// An Error carries the code and a message that names the key, tensor, file or
// position involved and says what to do next; nothing is thrown across the
// public API. json_blocker's errors add a byte offset, the schema's a path.
#pragma once

#include <cstddef>
#include <string>

#include "kvframe/common/result.h"

namespace kvframe {

// X(code, name, meaning): one line a code. Codes are C++-internal (the wire
// never sees their numbers), so a new one goes in the group it belongs to.
#define KVFRAME_ERROR_CODES(X)                                                                                     \
  /* files and models (the runtime) */                                                                             \
  X(kIo, "io", "a file could not be opened, read or mapped")                                                       \
  X(kTruncated, "truncated", "the file ends before a header, key, tensor info or tensor data it declares")         \
  X(kBadMagic, "bad_magic", "not a GGUF file")                                                                     \
  X(kUnsupportedVersion, "unsupported_version", "a GGUF version other than 2 or 3")                                \
  X(kCorrupt, "corrupt", "inconsistent contents: absurd counts, overlapping or misaligned tensors")                \
  X(kUnsupportedType, "unsupported_type", "a tensor type (ggml type) this runtime does not dequantize")            \
  X(kUnsupportedArch, "unsupported_arch", "general.architecture is not a decoder this runtime runs")               \
  X(kMissingKey, "missing_key", "a metadata key the model needs is absent")                                        \
  X(kWrongKeyType, "wrong_key_type", "a metadata key holds a different type than expected")                        \
  X(kMissingTensor, "missing_tensor", "a tensor the model needs is absent")                                        \
  X(kShapeMismatch, "shape_mismatch", "a tensor's shape disagrees with the hyperparameters")                       \
  X(kUnknownTemplate, "unknown_template", "a chat template this runtime does not recognise (it never guesses)")    \
  X(kTokenizer, "tokenizer", "a tokenizer vocabulary this runtime cannot use")                                     \
  X(kDeviceUnavailable, "device_unavailable", "the device asked for is not in this build or on this machine")      \
  X(kContextFull, "context_full", "a KV cache has no room for the tokens asked for")                                \
  X(kInvalidArgument, "invalid_argument", "a caller-supplied parameter is out of range")                           \
  X(kBackend, "backend", "libtorch failed (e.g. out of memory)")                                                   \
  /* output schemas (runtime_output) */                                                                            \
  X(kSchemaNotJson, "schema_not_json", "the output schema is not JSON")                                            \
  X(kSchemaInvalid, "schema_invalid", "the output schema is not a valid schema (e.g. minimum > maximum)")          \
  X(kSchemaUnsupported, "schema_unsupported", "the output schema uses a keyword or type outside the subset")       \
  X(kSchemaTooComplex, "schema_too_complex", "the output schema's compiled form would exceed the size limit")      \
  X(kUnsatisfiable, "unsatisfiable", "the output schema's shortest valid output exceeds max_tokens")               \
  /* JSON frames and rules (json_blocker) */                                                                       \
  X(kMalformedJson, "malformed_json", "not JSON: a bad token, a missing bracket, trailing content")                \
  X(kInvalidUtf8, "invalid_utf8", "a byte sequence that is not UTF-8")                                             \
  X(kTooDeep, "too_deep", "nesting deeper than the limit")                                                         \
  X(kTooLarge, "too_large", "a document larger than the limit")                                                   \
  X(kDuplicateKey, "duplicate_key", "the same key twice in one object")                                            \
  X(kPatchInvalid, "patch_invalid", "a patch that is not a valid RFC 7386 or RFC 6902 document")                   \
  X(kPatchPathMissing, "patch_path_missing", "a JSON Patch operation names a path the document lacks")             \
  X(kPatchTestFailed, "patch_test_failed", "a JSON Patch test operation did not hold")                             \
  X(kNoPreviousFrame, "no_previous_frame", "a patch arrived before any whole frame")                               \
  X(kInvalidRules, "invalid_rules", "a rules file that cannot be used")                                            \
  /* the server (server_core) */                                                                                   \
  X(kServerConfig, "server_config", "a server setting or key that cannot be used")                                 \
  X(kServerBind, "server_bind", "the server cannot listen on its endpoint")

enum class ErrorCode {
#define KVFRAME_ERROR_ENUMERATOR(code, name, meaning) code,
  KVFRAME_ERROR_CODES(KVFRAME_ERROR_ENUMERATOR)
#undef KVFRAME_ERROR_ENUMERATOR
};

// Every code, in order: for tables and tests that must cover them all.
inline constexpr ErrorCode kAllErrorCodes[] = {
#define KVFRAME_ERROR_LISTED(code, name, meaning) ErrorCode::code,
    KVFRAME_ERROR_CODES(KVFRAME_ERROR_LISTED)
#undef KVFRAME_ERROR_LISTED
};

// Short stable name, e.g. "truncated"; used in logs, CLI and --json output.
const char* error_code_name(ErrorCode code);

// What the code means, in one sentence (the Error's own message says more).
const char* error_message(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;  // names the key / tensor / file, and what to do next

  // "truncated: ..." — what CLIs print.
  std::string to_string() const;
};

template <class T>
using Result = common::Result<T, Error>;

// For operations that return nothing: ok() on success, else error().
using Status = Result<void>;

}  // namespace kvframe
