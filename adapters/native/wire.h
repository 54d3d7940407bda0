// What the client sends, kept as plain data until the background thread puts
// it on the wire: the server's session id is only known there (it changes
// when a restarted server re-opens the session), and frames are kept for
// re-sending after a restart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kvframe/client/kvframe_client.h"
#include "kvframe/protocol/protocol.h"

namespace kvframe::client {

namespace fb = protocol::fb;

struct HelloSpec {
  std::string client_name;
};

// kvf_session_params with owned strings: kept for re-opening after a restart.
struct OpenSpec {
  std::string game_id;
  std::string rules_json;
  fb::AttentionMode mode = fb::AttentionMode::Block;
  std::string system_prompt;
  uint32_t context_tokens = 0;
  int32_t block_heads = -1;
  float blend_ratio = -1;
  float block_temperature = -1;
  std::string adapter;  // empty: the server's default
};

struct CloseSpec {};

struct FrameSpec {
  uint64_t frame_number = 0;
  fb::FrameFormat format = fb::FrameFormat::Whole;
  std::shared_ptr<const std::string> json;  // shared with the session's replay copy
  std::optional<uint64_t> base_frame;        // a patch's: the frame it was made against
};

// kvf_query_params with owned strings.
struct QuerySpec {
  uint64_t frame_number = 0;
  fb::TaskKind kind = fb::TaskKind::Text;
  std::string npc_id;
  std::string instruction;
  std::string output_schema;
  uint32_t max_tokens = 64;
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  bool stream = false;
  uint32_t deadline_ms = 0;
  uint64_t deadline_frame = 0;
};

struct StatsSpec {};

// The background thread's keepalive (Link::keep_alive), never a caller's request.
struct PingSpec {};

using RequestSpec = std::variant<HelloSpec, OpenSpec, CloseSpec, FrameSpec, QuerySpec, StatsSpec, PingSpec>;

OpenSpec open_spec_from(const kvf_session_params& params);
QuerySpec query_spec_from(const kvf_query_params& params);

// An upper bound of the encoded size (strings plus a fixed allowance for the
// envelope), checked against the server's limit before anything is queued.
std::size_t encoded_size_bound(const RequestSpec& spec);

// The finished Message buffer for one request to the server session `server_session`.
flatbuffers::DetachedBuffer encode(uint64_t request_id, uint64_t server_session, const RequestSpec& spec);

// The protocol's Stats as one JSON object (field names as in kvframe.fbs).
std::string stats_to_json(const fb::Stats& stats);

}  // namespace kvframe::client
