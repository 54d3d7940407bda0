#include "kvframe/server_core/request.h"

#include <cmath>

namespace kvframe::server {

namespace {

using Parsed = common::Result<Request, RequestError>;

std::string text_of(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

template <class Enum>
bool in_range(Enum value, Enum last) {
  return static_cast<int>(value) >= 0 && static_cast<int>(value) <= static_cast<int>(last);
}

RequestError bad_request(uint64_t request_id, uint64_t session_id, std::string message) {
  return {fb::ErrorCode::BadRequest, std::move(message), request_id, session_id};
}

Parsed open_session(uint64_t id, const fb::OpenSession& m) {
  if (!in_range(m.mode(), fb::AttentionMode::MAX)) {
    return bad_request(id, 0, "OpenSession.mode " + std::to_string(static_cast<int>(m.mode())) +
                                  " is not an attention mode (Full, Prefix or Block)");
  }
  OpenSessionRequest open;
  open.game_id = text_of(m.game_id());
  open.config.mode = m.mode();
  open.config.system_prompt = text_of(m.system_prompt());
  open.config.context_tokens = m.context_tokens();
#define KVF_KNOB_FROM_WIRE(name) open.config.fidelity.name = m.name();
  KVF_FIDELITY_KNOBS(KVF_KNOB_FROM_WIRE)
#undef KVF_KNOB_FROM_WIRE
  open.config.adapter = text_of(m.adapter());
  const std::string rules = text_of(m.rules_json());
  if (!rules.empty()) {
    auto parsed = json_blocker::parse_rules(rules);
    if (!parsed) return bad_request(id, 0, "OpenSession.rules_json: " + parsed.error().to_string());
    open.config.rules = std::move(parsed).value();
  }
  return Request{id, std::move(open)};
}

Parsed frame(uint64_t id, const fb::Frame& m) {
  if (!in_range(m.format(), fb::FrameFormat::MAX)) {
    return bad_request(id, m.session_id(), "Frame.format " + std::to_string(static_cast<int>(m.format())) +
                                               " is not Whole, MergePatch or JsonPatch");
  }
  if (!m.json()) return bad_request(id, m.session_id(), "Frame.json is missing: send the gamecore JSON or a patch");
  std::optional<uint64_t> base;
  if (m.base_frame()) base = *m.base_frame();
  return Request{id, FrameRequest{m.session_id(), m.frame_number(), m.format(), m.json()->str(), base}};
}

// Stop strings are matched against every streamed piece: a few short ones.
constexpr size_t kMaxStopStrings = 16;
constexpr size_t kMaxStopStringBytes = 256;

// One option from the wire table `table` into `spec` (options.h's X arguments): an
// absent string is empty, an absent field its default (the schema's, which is the table's).
#define KVF_FROM_WIRE(KIND, name, c_type, cpp_type, value, c_value) KVF_FROM_WIRE_##KIND(name)
#define KVF_FROM_WIRE_STRING(name) spec.name = text_of(table.name());
#define KVF_FROM_WIRE_STRINGS(name) \
  if (const auto* list = table.name()) \
    for (const flatbuffers::String* item : *list) spec.name.push_back(text_of(item));
#define KVF_FROM_WIRE_ENUM(name) spec.name = table.name();
#define KVF_FROM_WIRE_NUMBER(name) spec.name = table.name();

QuerySpec query_spec_of(const fb::Query& table) {
  QuerySpec spec;
  KVF_QUERY_OPTIONS(KVF_FROM_WIRE)
  return spec;
}

void read_sampling(const fb::Sampling& table, QuerySpec& spec) { KVF_QUERY_SAMPLING_OPTIONS(KVF_FROM_WIRE) }

#undef KVF_FROM_WIRE
#undef KVF_FROM_WIRE_STRING
#undef KVF_FROM_WIRE_STRINGS
#undef KVF_FROM_WIRE_ENUM
#undef KVF_FROM_WIRE_NUMBER

Parsed query(uint64_t id, const fb::Query& m, const RequestLimits& limits) {
  const uint64_t session = m.session_id();
  QueryRequest q{session, query_spec_of(m)};
  if (const fb::Sampling* s = m.sampling()) read_sampling(*s, q.spec);
  const QuerySpec& spec = q.spec;
  if (!in_range(spec.kind, fb::TaskKind::MAX)) {
    return bad_request(id, session, "Query.kind " + std::to_string(static_cast<int>(spec.kind)) +
                                        " is not Text, NpcAction or Commentary");
  }
  if (spec.instruction.empty()) {
    return bad_request(id, session, "Query.instruction is empty: say what the model should do now");
  }
  if (spec.max_tokens < 1 || spec.max_tokens > limits.max_tokens) {
    return bad_request(id, session, "Query.max_tokens is " + std::to_string(spec.max_tokens) + "; it must be 1.." +
                                        std::to_string(limits.max_tokens));
  }
  if (spec.stop.size() > kMaxStopStrings) {
    return bad_request(id, session, "Query.stop has " + std::to_string(spec.stop.size()) + " strings; at most " +
                                        std::to_string(kMaxStopStrings) + " are allowed");
  }
  for (const std::string& stop : spec.stop) {
    if (stop.empty() || stop.size() > kMaxStopStringBytes) {
      return bad_request(id, session, "Query.stop strings must be 1.." + std::to_string(kMaxStopStringBytes) +
                                          " bytes long");
    }
  }
  if (!std::isfinite(spec.temperature) || spec.temperature < 0) {
    return bad_request(id, session, "Query.sampling.temperature must be a number >= 0 (0: greedy)");
  }
  if (spec.top_k < 0) return bad_request(id, session, "Query.sampling.top_k must be >= 0 (0: off)");
  if (!std::isfinite(spec.top_p) || spec.top_p <= 0 || spec.top_p > 1) {
    return bad_request(id, session, "Query.sampling.top_p must be in (0, 1]");
  }
  return Request{id, std::move(q)};
}

}  // namespace

Parsed parse_request(std::string_view bytes, const RequestLimits& limits) {
  auto decoded = protocol::decode(bytes, limits.max_message_bytes);
  if (!decoded) {
    const protocol::DecodeError& e = decoded.error();
    return RequestError{e.code, e.message, e.request_id, 0};
  }
  const fb::Message& message = **decoded;
  const uint64_t id = message.request_id();
  switch (message.body_type()) {
    case fb::Body::Hello:
      return Request{id, HelloRequest{text_of(message.body_as_Hello()->client_name())}};
    case fb::Body::OpenSession:
      return open_session(id, *message.body_as_OpenSession());
    case fb::Body::Frame:
      return frame(id, *message.body_as_Frame());
    case fb::Body::Query:
      return query(id, *message.body_as_Query(), limits);
    case fb::Body::CloseSession:
      return Request{id, CloseSessionRequest{message.body_as_CloseSession()->session_id()}};
    case fb::Body::StatsRequest:
      return Request{id, StatsRequest{}};
    case fb::Body::Ping:
      return Request{id, PingRequest{}};
    default: {
      const char* name = fb::EnumNameBody(message.body_type());
      const std::string body = (name && *name) ? name : "body type " + std::to_string(int(message.body_type()));
      return bad_request(id, 0, body + " is not a request: send Hello, OpenSession, Frame, Query, CloseSession, "
                                       "StatsRequest or Ping");
    }
  }
}

uint64_t session_of(const RequestBody& body) {
  if (const auto* f = std::get_if<FrameRequest>(&body)) return f->session_id;
  if (const auto* q = std::get_if<QueryRequest>(&body)) return q->session_id;
  if (const auto* c = std::get_if<CloseSessionRequest>(&body)) return c->session_id;
  return 0;
}

const char* request_name(const RequestBody& body) {
  static constexpr const char* kNames[] = {"Hello",        "OpenSession", "Frame", "Query",
                                           "CloseSession", "StatsRequest", "Ping"};
  return kNames[body.index()];
}

}  // namespace kvframe::server
