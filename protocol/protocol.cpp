#include "kvframe/protocol/protocol.h"

#include <cstring>
#include <limits>

#include <flatbuffers/flexbuffers.h>
#include <nlohmann/json.hpp>

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

// The request_id of a buffer that failed verification, when the Message table
// itself is sound and only something inside its body is not (a corrupt
// nested action, a bad string): the reply to it can still name the request,
// so its sender fails that request at once instead of waiting for a timeout.
uint64_t readable_request_id(std::string_view bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, bytes.size(), kMaxDepth, kMaxTables);
  const std::size_t root = verifier.VerifyOffset(0);
  if (root == 0) return 0;
  // Message derives privately from Table: verify its own fields as a Table.
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(data + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint64_t>(verifier, fb::Message::VT_REQUEST_ID, sizeof(uint64_t))) {
    return 0;
  }
  return fb::GetMessage(data)->request_id();
}

// nlohmann's SAX events straight into a FlexBuffers builder: no DOM, no
// recursion, so hostile nesting costs neither stack nor a second copy.
class FlexSax {
 public:
  using json = nlohmann::json;

  bool null() {
    builder_.Null();
    return true;
  }
  bool boolean(bool b) {
    builder_.Bool(b);
    return true;
  }
  bool number_integer(json::number_integer_t n) {
    builder_.Int(n);
    return true;
  }
  bool number_unsigned(json::number_unsigned_t n) {
    if (n <= static_cast<json::number_unsigned_t>(std::numeric_limits<int64_t>::max())) {
      builder_.Int(static_cast<int64_t>(n));
    } else {
      builder_.Double(static_cast<double>(n));
    }
    return true;
  }
  bool number_float(json::number_float_t x, const json::string_t&) {
    builder_.Double(x);
    return true;
  }
  bool string(json::string_t& s) {
    builder_.String(s);
    return true;
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }
  bool key(json::string_t& k) {
    if (k.find('\0') != std::string::npos) return fail("the key \"" + k.substr(0, k.find('\0')) + "\" holds U+0000");
    builder_.Key(k);
    return true;
  }
  bool start_object(std::size_t) { return open(builder_.StartMap()); }
  bool end_object() {
    builder_.EndMap(starts_.back());
    starts_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return open(builder_.StartVector()); }
  bool end_array() {
    builder_.EndVector(starts_.back(), false, false);
    starts_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) { return fail(e.what()); }

  // After a parse that succeeded.
  common::Result<std::vector<uint8_t>, std::string> finish() {
    builder_.Finish();
    if (builder_.HasDuplicateKeys()) return std::string("an object has the same key twice");
    return builder_.GetBuffer();
  }
  // After one that failed.
  const std::string& error() const { return error_; }

 private:
  bool open(std::size_t start) {
    if (starts_.size() == static_cast<std::size_t>(kMaxActionDepth)) {
      return fail("nested deeper than " + std::to_string(kMaxActionDepth) + " levels");
    }
    starts_.push_back(start);
    return true;
  }
  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  flexbuffers::Builder builder_;
  std::vector<std::size_t> starts_;
  std::string error_;
};

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
                       readable_request_id(bytes)};
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

common::Result<std::vector<uint8_t>, std::string> action_flexbuffer(std::string_view json) {
  FlexSax sax;
  if (!nlohmann::json::sax_parse(json.begin(), json.end(), &sax)) return "the action is not usable JSON: " + sax.error();
  return sax.finish();
}

}  // namespace kvframe::protocol
