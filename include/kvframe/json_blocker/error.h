// Typed errors for everything json_blocker reads from untrusted bytes.
//
// Every failure names what went wrong, where (a byte offset into the input that
// was being read), and what the caller can do about it. Nothing is thrown across
// the public API: functions return Result<T>.
#pragma once

#include <cstddef>
#include <string>

#include "kvframe/common/result.h"

namespace kvframe::json_blocker {

enum class ErrorCode {
  kMalformedJson,      // not JSON: bad token, missing bracket, trailing content
  kInvalidUtf8,        // a byte sequence that is not UTF-8
  kTooDeep,            // nesting deeper than Limits::max_nesting
  kTooLarge,           // document larger than Limits::max_document_bytes
  kDuplicateKey,       // the same key twice in one object (rejected, see partition.h)
  kPatchInvalid,       // a patch that is not a valid RFC 7386 / RFC 6902 document
  kPatchPathMissing,   // a JSON Patch operation names a path the document lacks
  kPatchTestFailed,    // a JSON Patch "test" operation did not hold
  kNoPreviousFrame,    // a patch arrived before any whole frame
  kInvalidRules,       // a rules file that cannot be used
  kIo,                 // a file could not be read
};

// Short stable name, e.g. "malformed_json"; used in logs and --json output.
const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code;
  std::size_t offset;   // byte offset in the input where the problem was found
  std::string message;  // one sentence a game programmer can act on

  // "malformed_json at byte 1234: ..." — what CLIs print.
  std::string to_string() const;
};

template <class T>
using Result = common::Result<T, Error>;

// For operations that return nothing: ok() on success, else error().
using Status = Result<void>;

}  // namespace kvframe::json_blocker
