// Reply messages, each a finished Message buffer ready for the socket.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "kvframe/server_core/backend.h"
#include "kvframe/server_core/memory_use.h"
#include "kvframe/server_core/stats.h"

namespace kvframe::server::replies {

using Buffer = flatbuffers::DetachedBuffer;

struct HelloFields {
  std::string_view server_version, model;
  const std::vector<fb::AttentionMode>* modes;
  fb::AttentionMode default_mode;
  uint64_t max_message_bytes;
  uint32_t max_context;
  uint64_t instance_id;
  const std::vector<std::string>* adapters;
  std::string_view default_adapter;
  uint32_t session_idle_ms;
};
Buffer hello(uint64_t request_id, const HelloFields& fields);
Buffer pong(uint64_t request_id);

Buffer session_opened(uint64_t request_id, uint64_t session_id, uint32_t context_tokens, fb::AttentionMode mode);
Buffer session_closed(uint64_t request_id, uint64_t session_id);
Buffer frame_ack(uint64_t request_id, uint64_t session_id, uint64_t frame_number, bool superseded,
                 const FrameSummary& summary);
Buffer chunk(uint64_t request_id, uint64_t session_id, uint32_t seq, std::string_view text, bool sentence_end);

struct ResultFields {
  uint64_t session_id, frame_number;
  fb::AttentionMode mode;
  const QueryAnswer* answer;
  std::string_view action_json;
  const std::vector<uint8_t>* action;  // action_json as a FlexBuffers value, or nullptr
  double queue_ms, server_ms;
  uint32_t batch_size;
};
Buffer result(uint64_t request_id, const ResultFields& fields);

struct QueueFields {
  uint32_t sessions, depth, high_water;
};
// server_wide: the whole server's figures (an operator's view), else one client's.
Buffer stats(uint64_t request_id, const StatsSnapshot& snapshot, const QueueFields& queue, const CacheStats& cache,
             const MemoryUse& memory, bool server_wide);

}  // namespace kvframe::server::replies
