// Every params struct's defaults, in one place: what kvf_*_params_init hands
// out, what fields an older caller's struct lacks take, and what the 0.3-era
// kvf_*_default_params (legacy_params.cpp) return. The session's and the
// query's come from protocol/options.json (kvframe/common/options.h).
#pragma once

#include "kvframe/client/kvframe_client.h"
#include "kvframe/common/options.h"

namespace kvframe::client {

inline kvf_client_params client_defaults() {
  kvf_client_params p{};
  p.struct_size = sizeof p;
  p.endpoint = "tcp://127.0.0.1:5555";
  p.client_name = "kvframe-client";
  p.connect_timeout_ms = 5000;
  p.request_timeout_ms = 30000;
  return p;
}

// One option's default into C struct `p` (options.h's X arguments): the
// strings' list stays NULL with its count 0.
#define KVF_C_DEFAULT(KIND, name, c_type, cpp_type, value, c_value) KVF_C_DEFAULT_##KIND(p.name, c_type, c_value)
#define KVF_C_DEFAULT_STRING(field, c_type, c_value) field = c_value;
#define KVF_C_DEFAULT_STRINGS(field, c_type, c_value)
#define KVF_C_DEFAULT_ENUM(field, c_type, c_value) field = c_value;
#define KVF_C_DEFAULT_NUMBER(field, c_type, c_value) field = static_cast<c_type>(c_value);

inline kvf_session_params session_defaults() {
  kvf_session_params p{};
  p.struct_size = sizeof p;
  KVF_SESSION_OPTIONS(KVF_C_DEFAULT)
  return p;
}

inline kvf_query_params query_defaults() {
  kvf_query_params p{};
  p.struct_size = sizeof p;
  KVF_QUERY_OPTIONS(KVF_C_DEFAULT)
  KVF_QUERY_SAMPLING_OPTIONS(KVF_C_DEFAULT)
  return p;
}

#undef KVF_C_DEFAULT
#undef KVF_C_DEFAULT_STRING
#undef KVF_C_DEFAULT_STRINGS
#undef KVF_C_DEFAULT_ENUM
#undef KVF_C_DEFAULT_NUMBER

}  // namespace kvframe::client
