// Typed errors for the model runtime: reading GGUF files, tokenizing, loading
// and running a model. Every message names the file key or tensor involved and
// says what to do next; nothing is thrown across the public API.
#pragma once

#include <optional>
#include <string>

#include "kvframe/common/result.h"

namespace kvframe::runtime {

enum class ErrorCode {
  kIo,                  // the file could not be opened, read or mapped
  kTruncated,           // the file ends before a header, key, tensor info or tensor data it declares
  kBadMagic,            // not a GGUF file
  kUnsupportedVersion,  // a GGUF version other than 2 or 3
  kCorrupt,             // inconsistent contents: absurd counts, overlapping or misaligned tensors
  kUnsupportedType,     // a tensor type (ggml type) this runtime does not dequantize
  kUnsupportedArch,     // general.architecture is not a Llama-family decoder we run
  kMissingKey,          // a metadata key the model needs is absent
  kWrongKeyType,        // a metadata key holds a different type than expected
  kMissingTensor,       // a tensor the model needs is absent
  kShapeMismatch,       // a tensor's shape disagrees with the hyperparameters
  kUnknownTemplate,     // a chat template we do not recognise (we never guess)
  kTokenizer,           // a tokenizer vocabulary we cannot use
  kDeviceUnavailable,   // --device cuda on a build or machine without CUDA
  kContextFull,         // a KV cache has no room for the tokens asked for
  kInvalidArgument,     // a caller-supplied parameter out of range
  kBackend,             // libtorch failed (e.g. out of memory); the message carries its text
  kBadSchema,           // an output schema that is not valid JSON Schema or not in the supported subset
  kUnsatisfiable,       // an output schema whose shortest valid output exceeds max_tokens
};

// Short stable name, e.g. "truncated"; used in logs and CLI output.
const char* error_code_name(ErrorCode code);

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

}  // namespace kvframe::runtime
