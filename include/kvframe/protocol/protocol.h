// The wire protocol's C++ side: the flatbuffers types generated from
// protocol/kvframe.fbs (namespace kvframe::protocol::fb), the version, and
// the one function every receiver runs on untrusted bytes before reading
// them. Knows nothing of the model or of ZeroMQ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "kvframe/common/result.h"
#include "kvframe/protocol/kvframe_generated.h"

namespace kvframe::protocol {

// Bumped only when a message's meaning changes (new fields do not bump it).
inline constexpr uint16_t kProtocolVersion = 1;
// The server's default limit on one message (its --max-message-mb).
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{16} << 20;

struct DecodeError {
  fb::ErrorCode code = fb::ErrorCode::Malformed;  // Malformed, TooLarge or WrongVersion
  std::string message;                            // says what to do next
  uint64_t request_id = 0;                        // when the buffer was readable enough to tell
};

template <class T>
using Result = common::Result<T, DecodeError>;

// Verifies `bytes` (flatbuffers Verifier with the "KVF1" identifier, depth
// and table limits), then the size limit, the protocol version and that a
// body is present. On success the returned pointer reads into `bytes`, which
// must outlive it. An oversize buffer that still verifies reports its
// request_id, so the sender learns which request was refused.
Result<const fb::Message*> decode(std::string_view bytes, std::size_t max_bytes = kDefaultMaxMessageBytes);

// `bytes` at an 8-byte aligned address: as they are when already aligned,
// else copied into `storage`. Call it before decode() on bytes from ZeroMQ:
// flatbuffers reads scalars in place and its Verifier checks alignment only
// relative to the buffer's start, while ZeroMQ keeps small messages inside
// its message struct at any address.
std::string_view aligned(std::string_view bytes, std::vector<uint64_t>& storage);

// "UnknownSession" etc. (flatc's names), for logs and CLI output.
const char* error_code_name(fb::ErrorCode code);

// A finished Message buffer with an Error body, for replies built without a
// FlatBufferBuilder at hand (the server's door, the fuzz target).
flatbuffers::DetachedBuffer error_message(uint64_t request_id, fb::ErrorCode code, std::string_view message,
                                          uint64_t session_id = 0);

// Result.action: the action JSON parsed into a FlexBuffers value (objects ->
// maps, arrays -> vectors, integers -> int64, other numbers and integers
// beyond int64 -> double, strings, bools, null). Refused, with a message
// saying why: text that is not one JSON value, nesting deeper than
// kMaxActionDepth (FlexBuffers' verifier, which every reader runs, refuses
// deeper values), an object with a key twice or a key holding U+0000
// (FlexBuffers keys are C strings looked up by binary search).
inline constexpr int kMaxActionDepth = 64;
common::Result<std::vector<uint8_t>, std::string> action_flexbuffer(std::string_view json);

// Finishes `builder` with a Message around `body` (version and identifier set).
template <class Body>
void finish_message(flatbuffers::FlatBufferBuilder& builder, uint64_t request_id, flatbuffers::Offset<Body> body) {
  auto message = fb::CreateMessage(builder, kProtocolVersion, request_id, fb::BodyTraits<Body>::enum_value,
                                   body.Union());
  fb::FinishMessageBuffer(builder, message);
}

}  // namespace kvframe::protocol
