#include "kvframe/protocol/protocol.h"

#include <cstring>

namespace kvframe::protocol {

namespace {

// Bounds for the Verifier: our messages are shallow (Message > body > a few
// tables), so a deep or table-heavy buffer is hostile, not big.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 4096;

bool verifies(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kMaxDepth, kMaxTables);
  return fb::VerifyMessageBuffer(verifier);
}

}  // namespace

Result<const fb::Message*> decode(std::string_view bytes, std::size_t max_bytes) {
  if (bytes.size() < 8 || !fb::MessageBufferHasIdentifier(bytes.data())) {
    return DecodeError{fb::ErrorCode::Malformed,
                       "not a kvframe message (" + std::to_string(bytes.size()) +
                           " bytes without the KVF1 identifier): send a Message built from protocol/kvframe.fbs",
                       0};
  }
  if (!verifies(bytes)) {
    return DecodeError{fb::ErrorCode::Malformed,
                       "the message failed flatbuffers verification (truncated or corrupt buffer, " +
                           std::to_string(bytes.size()) + " bytes)",
                       0};
  }
  const fb::Message* message = fb::GetMessage(bytes.data());
  if (bytes.size() > max_bytes) {
    return DecodeError{fb::ErrorCode::TooLarge,
                       "the message is " + std::to_string(bytes.size()) + " bytes; this server takes at most " +
                           std::to_string(max_bytes) + " (send patches, drop fields with block rules, or raise --max-message-mb)",
                       message->request_id()};
  }
  if (message->protocol_version() != kProtocolVersion) {
    return DecodeError{fb::ErrorCode::WrongVersion,
                       "protocol version " + std::to_string(message->protocol_version()) + " but this server speaks " +
                           std::to_string(kProtocolVersion) + ": use a client built from the same kvframe release",
                       message->request_id()};
  }
  if (message->body_type() == fb::Body::NONE || message->body() == nullptr) {
    return DecodeError{fb::ErrorCode::Malformed, "the message has no body", message->request_id()};
  }
  return message;
}

std::string_view aligned(std::string_view bytes, std::vector<uint64_t>& storage) {
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) return bytes;
  storage.resize(bytes.size() / sizeof(uint64_t) + 1);
  std::memcpy(storage.data(), bytes.data(), bytes.size());
  return {reinterpret_cast<const char*>(storage.data()), bytes.size()};
}

const char* error_code_name(fb::ErrorCode code) {
  const char* name = fb::EnumNameErrorCode(code);
  return (name && *name) ? name : "Unknown";
}

flatbuffers::DetachedBuffer error_message(uint64_t request_id, fb::ErrorCode code, std::string_view message,
                                          uint64_t session_id) {
  flatbuffers::FlatBufferBuilder builder(128 + message.size());
  auto text = builder.CreateString(message.data(), message.size());
  finish_message(builder, request_id, fb::CreateError(builder, code, text, session_id));
  return builder.Release();
}

}  // namespace kvframe::protocol
