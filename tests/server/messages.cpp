#include "messages.h"

#include <limits>

namespace kvframe::server::test {

namespace {

template <class Body>
std::string finished(flatbuffers::FlatBufferBuilder& b, uint64_t request_id, flatbuffers::Offset<Body> body,
                     uint16_t version = protocol::kProtocolVersion) {
  auto message = fb::CreateMessage(b, version, request_id, fb::BodyTraits<Body>::enum_value, body.Union());
  fb::FinishMessageBuffer(b, message);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

std::string hello_message(uint64_t request_id, uint16_t version) {
  flatbuffers::FlatBufferBuilder b;
  return finished(b, request_id, fb::CreateHello(b, b.CreateString("kvframe server test")), version);
}

std::string open_session_message(uint64_t request_id, fb::AttentionMode mode, uint32_t context_tokens,
                                 std::string_view rules_json, int32_t block_heads, float blend_ratio,
                                 float block_temperature, std::string_view adapter) {
  flatbuffers::FlatBufferBuilder b;
  auto rules = b.CreateString(rules_json.data(), rules_json.size());
  auto adapter_name = b.CreateString(adapter.data(), adapter.size());
  return finished(b, request_id,
                  fb::CreateOpenSession(b, b.CreateString("test-game"), rules, mode, 0, context_tokens, block_heads,
                                        blend_ratio, block_temperature, adapter_name));
}

std::string frame_message(uint64_t request_id, uint64_t session_id, uint64_t frame_number, std::string_view json,
                          fb::FrameFormat format, uint64_t base_frame) {
  flatbuffers::FlatBufferBuilder b(json.size() + 128);
  auto text = b.CreateString(json.data(), json.size());
  flatbuffers::Optional<uint64_t> base;
  if (format != fb::FrameFormat::Whole && base_frame != kNoBase) {
    base = base_frame == kPreviousFrame ? frame_number - 1 : base_frame;
  }
  return finished(b, request_id, fb::CreateFrame(b, session_id, frame_number, format, text, base));
}

std::string query_message(uint64_t request_id, uint64_t session_id, const QueryOptions& o) {
  flatbuffers::FlatBufferBuilder b;
  auto npc = b.CreateString("p2");
  auto instruction = b.CreateString(o.instruction);
  flatbuffers::Offset<flatbuffers::String> schema;
  if (!o.output_schema.empty()) schema = b.CreateString(o.output_schema);
  auto sampling = fb::CreateSampling(b);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> stop;
  if (!o.stop.empty()) stop = b.CreateVectorOfStrings(o.stop);
  return finished(b, request_id,
                  fb::CreateQuery(b, session_id, o.frame_number, o.kind, npc, instruction, schema, o.max_tokens,
                                  sampling, stop, o.stream, o.deadline_ms, o.deadline_frame));
}

std::string close_session_message(uint64_t request_id, uint64_t session_id) {
  flatbuffers::FlatBufferBuilder b;
  return finished(b, request_id, fb::CreateCloseSession(b, session_id));
}

std::string stats_request_message(uint64_t request_id) {
  flatbuffers::FlatBufferBuilder b;
  return finished(b, request_id, fb::CreateStatsRequest(b));
}

std::string ping_message(uint64_t request_id, uint16_t version) {
  flatbuffers::FlatBufferBuilder b;
  return finished(b, request_id, fb::CreatePing(b), version);
}

const fb::Message* read_reply(const std::string& bytes) {
  auto decoded = protocol::decode(bytes, std::numeric_limits<std::size_t>::max());
  return decoded ? *decoded : nullptr;
}

}  // namespace kvframe::server::test
