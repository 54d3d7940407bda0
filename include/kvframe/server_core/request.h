// A request as the server keeps it: decoded from untrusted bytes, every field
// checked, and copied out of the ZeroMQ buffer (requests wait in queues after
// that buffer is gone). parse_request() is the server's door: it runs
// protocol::decode() and then the checks that need no session state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kvframe/server_core/backend.h"

namespace kvframe::server {

struct HelloRequest {
  std::string client_name;
};

struct OpenSessionRequest {
  std::string game_id;
  SessionConfig config;  // context_tokens as asked: 0 means the server's default
};

struct FrameRequest {
  uint64_t session_id = 0;
  uint64_t frame_number = 0;
  fb::FrameFormat format = fb::FrameFormat::Whole;
  std::string json;
  std::optional<uint64_t> base_frame;  // a patch's base: the frame it was made against
};

struct QueryRequest {
  uint64_t session_id = 0;
  QuerySpec spec;  // frame_number 0: the latest
};

struct CloseSessionRequest {
  uint64_t session_id = 0;
};

struct StatsRequest {};

struct PingRequest {};  // keepalive: it only says the client is still there

using RequestBody = std::variant<HelloRequest, OpenSessionRequest, FrameRequest, QueryRequest, CloseSessionRequest,
                                 StatsRequest, PingRequest>;

struct Request {
  uint64_t request_id = 0;
  RequestBody body;
};

// Why a request was refused at the door; request_id and session_id are set
// when the bytes were readable enough to tell.
struct RequestError {
  fb::ErrorCode code = fb::ErrorCode::Malformed;
  std::string message;
  uint64_t request_id = 0;
  uint64_t session_id = 0;
};
// ok(), or why a request is refused.
using RequestStatus = common::Result<void, RequestError>;

struct RequestLimits {
  std::size_t max_message_bytes = protocol::kDefaultMaxMessageBytes;
  uint32_t max_tokens = 4096;
};

common::Result<Request, RequestError> parse_request(std::string_view bytes, const RequestLimits& limits);

// The session a request is about; 0 for Hello, OpenSession, StatsRequest and Ping.
uint64_t session_of(const RequestBody& body);
// "Frame", "Query", ... for logs.
const char* request_name(const RequestBody& body);

}  // namespace kvframe::server
