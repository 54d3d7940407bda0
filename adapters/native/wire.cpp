#include "wire.h"

#include <nlohmann/json.hpp>

#include <type_traits>

namespace kvframe::client {

namespace {

std::string text_or_empty(const char* text) { return text ? std::string(text) : std::string(); }

// Generous room for a Message's tables, vtables and field slots around its strings.
constexpr std::size_t kEnvelopeBytes = 1024;

flatbuffers::Offset<flatbuffers::String> string_of(flatbuffers::FlatBufferBuilder& b, const std::string& s) {
  return b.CreateString(s.data(), s.size());
}

// An option onto the wire (options.h's X arguments), in two passes since
// flatbuffers writes strings before the table pointing at them: the strings
// (an empty one is left out, which the server reads as empty), then every
// field into the table's builder.
#define KVF_WIRE_STRINGS(KIND, name, c_type, cpp_type, value, c_value) KVF_WIRE_STRINGS_##KIND(name)
#define KVF_WIRE_STRINGS_STRING(name) const auto name##_offset = string_or_absent(b, s.name);
#define KVF_WIRE_STRINGS_STRINGS(name) const auto name##_offset = strings_or_absent(b, s.name);
#define KVF_WIRE_STRINGS_ENUM(name)
#define KVF_WIRE_STRINGS_NUMBER(name)
#define KVF_WIRE_ADD_TO(builder) KVF_WIRE_ADD_##builder
#define KVF_WIRE_ADD_FIELD(builder, KIND, name) KVF_WIRE_ADD_##KIND(builder, name)
#define KVF_WIRE_ADD_STRING(builder, name) builder.add_##name(name##_offset);
#define KVF_WIRE_ADD_STRINGS(builder, name) builder.add_##name(name##_offset);
#define KVF_WIRE_ADD_ENUM(builder, name) builder.add_##name(s.name);
#define KVF_WIRE_ADD_NUMBER(builder, name) builder.add_##name(s.name);
#define KVF_WIRE_ADD_open(KIND, name, c_type, cpp_type, value, c_value) KVF_WIRE_ADD_FIELD(open, KIND, name)
#define KVF_WIRE_ADD_query(KIND, name, c_type, cpp_type, value, c_value) KVF_WIRE_ADD_FIELD(query, KIND, name)
#define KVF_WIRE_ADD_sampling_builder(KIND, name, c_type, cpp_type, value, c_value) \
  KVF_WIRE_ADD_FIELD(sampling_builder, KIND, name)

flatbuffers::Offset<flatbuffers::String> string_or_absent(flatbuffers::FlatBufferBuilder& b, const std::string& s) {
  return s.empty() ? flatbuffers::Offset<flatbuffers::String>() : string_of(b, s);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> strings_or_absent(
    flatbuffers::FlatBufferBuilder& b, const std::vector<std::string>& strings) {
  return strings.empty() ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
                         : b.CreateVectorOfStrings(strings);
}

// The bytes an option's strings take (options.h's X arguments).
#define KVF_STRING_BYTES(KIND, name, c_type, cpp_type, value, c_value) +KVF_STRING_BYTES_##KIND(s.name)
#define KVF_STRING_BYTES_STRING(field) field.size()
#define KVF_STRING_BYTES_STRINGS(field) strings_bytes(field)
#define KVF_STRING_BYTES_ENUM(field) 0
#define KVF_STRING_BYTES_NUMBER(field) 0

std::size_t strings_bytes(const std::vector<std::string>& strings) {
  std::size_t n = 0;
  for (const std::string& s : strings) n += s.size() + 8;  // + length prefix and offset
  return n;
}

struct Encoder {
  flatbuffers::FlatBufferBuilder& b;
  uint64_t request_id;
  uint64_t server_session;

  void operator()(const HelloSpec& s) {
    protocol::finish_message(b, request_id, fb::CreateHello(b, string_of(b, s.client_name)));
  }
  void operator()(const OpenSpec& s) {
    KVF_SESSION_OPTIONS(KVF_WIRE_STRINGS)
    fb::OpenSessionBuilder open(b);
    KVF_SESSION_OPTIONS(KVF_WIRE_ADD_TO(open))
    protocol::finish_message(b, request_id, open.Finish());
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
    KVF_QUERY_OPTIONS(KVF_WIRE_STRINGS)
    fb::SamplingBuilder sampling_builder(b);
    KVF_QUERY_SAMPLING_OPTIONS(KVF_WIRE_ADD_TO(sampling_builder))
    const auto sampling = sampling_builder.Finish();
    fb::QueryBuilder query(b);
    query.add_session_id(server_session);
    query.add_sampling(sampling);
    KVF_QUERY_OPTIONS(KVF_WIRE_ADD_TO(query))
    protocol::finish_message(b, request_id, query.Finish());
  }
  void operator()(const StatsSpec&) { protocol::finish_message(b, request_id, fb::CreateStatsRequest(b)); }
  void operator()(const PingSpec&) { protocol::finish_message(b, request_id, fb::CreatePing(b)); }
};

struct SizeBound {
  std::size_t operator()(const HelloSpec& s) const { return s.client_name.size(); }
  std::size_t operator()(const OpenSpec& s) const { return 0 KVF_SESSION_OPTIONS(KVF_STRING_BYTES); }
  std::size_t operator()(const CloseSpec&) const { return 0; }
  std::size_t operator()(const FrameSpec& s) const { return s.json->size(); }
  std::size_t operator()(const QuerySpec& s) const { return 0 KVF_QUERY_OPTIONS(KVF_STRING_BYTES); }
  std::size_t operator()(const StatsSpec&) const { return 0; }
  std::size_t operator()(const PingSpec&) const { return 0; }
};

}  // namespace

// One option from a C params struct into a spec (options.h's X arguments).
#define KVF_FROM_C(KIND, name, c_type, cpp_type, value, c_value) KVF_FROM_C_##KIND(spec.name, p.name, cpp_type)
#define KVF_FROM_C_STRING(to, from, cpp_type) to = text_or_empty(from);
#define KVF_FROM_C_STRINGS(to, from, cpp_type) \
  for (size_t i = 0; i < from##_count; ++i) to.push_back(text_or_empty(from[i]));
#define KVF_FROM_C_ENUM(to, from, cpp_type) to = static_cast<fb::cpp_type>(from);
#define KVF_FROM_C_NUMBER(to, from, cpp_type) to = static_cast<cpp_type>(from);

OpenSpec open_spec_from(const kvf_session_params& p) {
  OpenSpec spec;
  KVF_SESSION_OPTIONS(KVF_FROM_C)
  return spec;
}

QuerySpec query_spec_from(const kvf_query_params& p) {
  QuerySpec spec;
  KVF_QUERY_OPTIONS(KVF_FROM_C)
  KVF_QUERY_SAMPLING_OPTIONS(KVF_FROM_C)
  return spec;
}

// The C structs hold each option of protocol/options.json as its type (the
// order and the fields past them: tests/adapters/abi_mirrors_test.py).
#define KVF_C_TYPE_IS(c_struct, name, c_type) \
  static_assert(std::is_same_v<decltype(c_struct::name), c_type>, #c_struct "." #name ": not options.json's type");
#define KVF_SESSION_C_TYPE(KIND, name, c_type, cpp_type, value, c_value) KVF_C_TYPE_IS(kvf_session_params, name, c_type)
#define KVF_QUERY_C_TYPE(KIND, name, c_type, cpp_type, value, c_value) KVF_C_TYPE_IS(kvf_query_params, name, c_type)
KVF_SESSION_OPTIONS(KVF_SESSION_C_TYPE)
KVF_QUERY_OPTIONS(KVF_QUERY_C_TYPE)
KVF_QUERY_SAMPLING_OPTIONS(KVF_QUERY_C_TYPE)
// ... and an enum's C default (kvf_*_params_init's) is the wire's.
#define KVF_C_ENUM_DEFAULT(KIND, name, c_type, cpp_type, value, c_value) \
  KVF_C_ENUM_DEFAULT_##KIND(name, cpp_type, value, c_value)
#define KVF_C_ENUM_DEFAULT_ENUM(name, cpp_type, value, c_value)                     \
  static_assert(static_cast<int>(c_value) == static_cast<int>(fb::cpp_type::value), \
                #name ": the C default is not the wire's");
#define KVF_C_ENUM_DEFAULT_STRING(name, cpp_type, value, c_value)
#define KVF_C_ENUM_DEFAULT_STRINGS(name, cpp_type, value, c_value)
#define KVF_C_ENUM_DEFAULT_NUMBER(name, cpp_type, value, c_value)
KVF_SESSION_OPTIONS(KVF_C_ENUM_DEFAULT)
KVF_QUERY_OPTIONS(KVF_C_ENUM_DEFAULT)

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
                         {"session_kv_bytes", s.session_kv_bytes()},
                         {"resident_bytes", s.resident_bytes()},
                         {"scratch_bytes", s.scratch_bytes()}};
  return json.dump();
}

}  // namespace kvframe::client
