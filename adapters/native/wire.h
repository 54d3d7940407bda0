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
#include "kvframe/protocol/option_specs.h"
#include "kvframe/protocol/protocol.h"

namespace kvframe::client {

namespace fb = protocol::fb;

struct HelloSpec {
  std::string client_name;
};

// Kept for re-opening after a restart (OpenSpec), and until encoded (QuerySpec).
using protocol::OpenSpec;
using protocol::QuerySpec;

struct CloseSpec {};

struct FrameSpec {
  uint64_t frame_number = 0;
  fb::FrameFormat format = fb::FrameFormat::Whole;
  std::shared_ptr<const std::string> json;  // shared with the session's replay copy
  std::optional<uint64_t> base_frame;        // a patch's: the frame it was made against
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
