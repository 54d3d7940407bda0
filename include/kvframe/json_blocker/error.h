// Typed errors for everything json_blocker reads from untrusted bytes.
//
// Every failure names what went wrong (a code of kvframe's one list,
// common/error.h: kMalformedJson ... kInvalidRules, or kIo), where (a byte
// offset into the input that was being read), and what the caller can do
// about it. Nothing is thrown across the public API: functions return
// Result<T>.
#pragma once

#include <cstddef>
#include <string>

#include "kvframe/common/error.h"

namespace kvframe::json_blocker {

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
