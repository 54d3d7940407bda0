#include "wire.h"

#include <nlohmann/json.hpp>

namespace kvframe::client {

namespace {

std::string text_or_empty(const char* text) { return text ? std::string(text) : std::string(); }

// Generous room for a Message's tables, vtables and field slots around its strings.
constexpr std::size_t kEnvelopeBytes = 1024;

flatbuffers::Offset<flatbuffers::String> string_of(flatbuffers::FlatBufferBuilder& b, const std::string& s) {
  return b.CreateString(s.data(), s.size());
}

struct Encoder {
  flatbuffers::FlatBufferBuilder& b;
  uint64_t request_id;
  uint64_t server_session;

  void operator()(const HelloSpec& s) {
    protocol::finish_message(b, request_id, fb::CreateHello(b, string_of(b, s.client_name)));
  }
  void operator()(const OpenSpec& s) {
    auto game = string_of(b, s.game_id);
    auto rules = string_of(b, s.rules_json);
    auto system = string_of(b, s.system_prompt);
    auto adapter = string_of(b, s.adapter);
    protocol::finish_message(b, request_id,
                             fb::CreateOpenSession(b, game, rules, s.mode, system, s.context_tokens, s.block_heads,
                                                   s.blend_ratio, s.block_temperature, adapter));
  }
  void operator()(const CloseSpec&) {
    protocol::finish_message(b, request_id, fb::CreateCloseSession(b, server_session));
  }
  void operator()(const FrameSpec& s) {
    auto json = string_of(b, *s.json);
    protocol::finish_message(b, request_id, fb::CreateFrame(b, server_session, s.frame_number, s.format, json,
                                                             s.base_frame ? flatbuffers::Optional<uint64_t>(*s.base_frame)
                                                                          : flatbuffers::nullopt));
  }
  void operator()(const QuerySpec& s) {
    auto npc = string_of(b, s.npc_id);
    auto instruction = string_of(b, s.instruction);
    auto schema = s.output_schema.empty() ? flatbuffers::Offset<flatbuffers::String>() : string_of(b, s.output_schema);
    auto stop = s.stop.empty() ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
                               : b.CreateVectorOfStrings(s.stop);
    auto sampling = fb::CreateSampling(b, s.temperature, s.top_k, s.top_p, s.seed);
    protocol::finish_message(b, request_id,
                             fb::CreateQuery(b, server_session, s.frame_number, s.kind, npc, instruction, schema,
                                             s.max_tokens, sampling, stop, s.stream, s.deadline_ms,
                                             s.deadline_frame));
  }
  void operator()(const StatsSpec&) { protocol::finish_message(b, request_id, fb::CreateStatsRequest(b)); }
  void operator()(const PingSpec&) { protocol::finish_message(b, request_id, fb::CreatePing(b)); }
};

struct SizeBound {
  std::size_t operator()(const HelloSpec& s) const { return s.client_name.size(); }
  std::size_t operator()(const OpenSpec& s) const {
    return s.game_id.size() + s.rules_json.size() + s.system_prompt.size();
  }
  std::size_t operator()(const CloseSpec&) const { return 0; }
  std::size_t operator()(const FrameSpec& s) const { return s.json->size(); }
  std::size_t operator()(const QuerySpec& s) const {
    std::size_t n = s.npc_id.size() + s.instruction.size() + s.output_schema.size();
    for (const std::string& stop : s.stop) n += stop.size() + 8;  // + length prefix and offset
    return n;
  }
  std::size_t operator()(const StatsSpec&) const { return 0; }
  std::size_t operator()(const PingSpec&) const { return 0; }
};

}  // namespace

OpenSpec open_spec_from(const kvf_session_params& p) {
  OpenSpec spec;
  spec.game_id = text_or_empty(p.game_id);
  spec.rules_json = text_or_empty(p.rules_json);
  spec.mode = static_cast<fb::AttentionMode>(p.mode);
  spec.system_prompt = text_or_empty(p.system_prompt);
  spec.context_tokens = p.context_tokens;
  spec.block_heads = p.block_heads;
  spec.blend_ratio = p.blend_ratio;
  spec.block_temperature = p.block_temperature;
  spec.adapter = text_or_empty(p.adapter);
  return spec;
}

QuerySpec query_spec_from(const kvf_query_params& p) {
  QuerySpec spec;
  spec.frame_number = p.frame_number;
  spec.kind = static_cast<fb::TaskKind>(p.kind);
  spec.npc_id = text_or_empty(p.npc_id);
  spec.instruction = text_or_empty(p.instruction);
  spec.output_schema = text_or_empty(p.output_schema);
  spec.max_tokens = p.max_tokens;
  spec.temperature = p.temperature;
  spec.top_k = p.top_k;
  spec.top_p = p.top_p;
  spec.seed = p.seed;
  for (size_t i = 0; i < p.stop_count; ++i) spec.stop.push_back(text_or_empty(p.stop[i]));
  spec.stream = p.stream != 0;
  spec.deadline_ms = p.deadline_ms;
  spec.deadline_frame = p.deadline_frame;
  return spec;
}

std::size_t encoded_size_bound(const RequestSpec& spec) { return std::visit(SizeBound{}, spec) + kEnvelopeBytes; }

flatbuffers::DetachedBuffer encode(uint64_t request_id, uint64_t server_session, const RequestSpec& spec) {
  flatbuffers::FlatBufferBuilder builder(256 + encoded_size_bound(spec));
  std::visit(Encoder{builder, request_id, server_session}, spec);
  return builder.Release();
}

std::string stats_to_json(const fb::Stats& s) {
  nlohmann::json stages = nlohmann::json::array();
  if (s.stages()) {
    for (const fb::StageStats* stage : *s.stages()) {
      stages.push_back({{"name", stage->name() ? stage->name()->str() : std::string()},
                        {"count", stage->count()},
                        {"p50_ms", stage->p50_ms()},
                        {"p99_ms", stage->p99_ms()}});
    }
  }
  nlohmann::json json = {{"uptime_s", s.uptime_s()},
                         {"sessions", s.sessions()},
                         {"frames", s.frames()},
                         {"frames_superseded", s.frames_superseded()},
                         {"queries", s.queries()},
                         {"deadline_missed", s.deadline_missed()},
                         {"errors", s.errors()},
                         {"busy_rejected", s.busy_rejected()},
                         {"queue_depth", s.queue_depth()},
                         {"queue_high_water", s.queue_high_water()},
                         {"cache_hits", s.cache_hits()},
                         {"cache_misses", s.cache_misses()},
                         {"cache_bytes", s.cache_bytes()},
                         {"stages", std::move(stages)},
                         {"undeliverable", s.undeliverable()},
                         {"sessions_expired", s.sessions_expired()},
                         {"weights_bytes", s.weights_bytes()},
                         {"session_kv_bytes", s.session_kv_bytes()}};
  return json.dump();
}

}  // namespace kvframe::client
