// Protocol messages as bytes, for the server's tests and its fuzz corpus.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvframe/protocol/protocol.h"

namespace kvframe::server::test {

namespace fb = protocol::fb;

std::string hello_message(uint64_t request_id, uint16_t version = protocol::kProtocolVersion);
std::string open_session_message(uint64_t request_id, fb::AttentionMode mode = fb::AttentionMode::Block,
                                 uint32_t context_tokens = 0, std::string_view rules_json = {},
                                 int32_t block_heads = -1, float blend_ratio = -1, float block_temperature = -1,
                                 std::string_view adapter = {});
// A patch's base_frame defaults to the frame numbered just before it;
// kNoBase leaves the field out.
inline constexpr uint64_t kPreviousFrame = UINT64_MAX, kNoBase = UINT64_MAX - 1;
std::string frame_message(uint64_t request_id, uint64_t session_id, uint64_t frame_number, std::string_view json,
                          fb::FrameFormat format = fb::FrameFormat::Whole, uint64_t base_frame = kPreviousFrame);

struct QueryOptions {
  uint64_t frame_number = 0;
  fb::TaskKind kind = fb::TaskKind::Text;
  std::string instruction = "What does p2 do next?";
  uint32_t max_tokens = 4;
  bool stream = false;
  uint32_t deadline_ms = 0;
  uint64_t deadline_frame = 0;
  std::string output_schema;
  std::vector<std::string> stop;
};
std::string query_message(uint64_t request_id, uint64_t session_id, const QueryOptions& options = {});
std::string close_session_message(uint64_t request_id, uint64_t session_id);
std::string stats_request_message(uint64_t request_id);
std::string ping_message(uint64_t request_id, uint16_t version = protocol::kProtocolVersion);

// A reply, verified (no size limit); nullptr if it does not verify.
const fb::Message* read_reply(const std::string& bytes);

}  // namespace kvframe::server::test
