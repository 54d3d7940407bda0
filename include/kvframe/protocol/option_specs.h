// A session's and a query's options as plain data, strings owned and enums
// the wire's, each at its default: made from protocol/options.json's lists
// (kvframe/common/options.h), so the native client (what it keeps until it
// encodes) and the server (what it decoded, what the backend runs) hold the
// same struct and no copy of a field list exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/common/options.h"
#include "kvframe/protocol/protocol.h"

// One option as a field of a spec (options.h's X arguments).
#define KVF_SPEC_FIELD(KIND, name, c_type, cpp_type, value, c_value) KVF_SPEC_FIELD_##KIND(name, cpp_type, value)
#define KVF_SPEC_FIELD_STRING(name, cpp_type, value) std::string name;
#define KVF_SPEC_FIELD_STRINGS(name, cpp_type, value) std::vector<std::string> name;
#define KVF_SPEC_FIELD_ENUM(name, cpp_type, value) \
  ::kvframe::protocol::fb::cpp_type name = ::kvframe::protocol::fb::cpp_type::value;
#define KVF_SPEC_FIELD_NUMBER(name, cpp_type, value) cpp_type name = value;

namespace kvframe::protocol {

// OpenSession's fields (kvf_session_params').
struct OpenSpec {
  KVF_SESSION_OPTIONS(KVF_SPEC_FIELD)
};

// Query's fields, its sampling's among them (kvf_query_params').
struct QuerySpec {
  KVF_QUERY_OPTIONS(KVF_SPEC_FIELD)
  KVF_QUERY_SAMPLING_OPTIONS(KVF_SPEC_FIELD)
};

}  // namespace kvframe::protocol
