// The one map from kvframe's errors (common/error.h) to the wire's ErrorCode
// (protocol/kvframe.fbs), which the native client hands on unchanged as
// kvf_status (adapters/native/event.cpp checks the two agree value for
// value). The wire's list is the protocol's and never renumbered; the C++
// list is internal, so many of its codes share a wire code.
#pragma once

#include "kvframe/common/error.h"
#include "kvframe/protocol/kvframe_generated.h"

namespace kvframe::protocol {

// Exhaustive: a new ErrorCode is a -Wswitch warning here until it has one.
// The request's own mistakes read as BadRequest, BadJson, OutOfOrder,
// ContextFull, Unsatisfiable or Unsupported; a model, file or libtorch
// failure as Engine. Never None, Internal, or a code only clients raise.
fb::ErrorCode wire_code(ErrorCode code);

}  // namespace kvframe::protocol
