// Every params struct's defaults, in one place: what kvf_*_params_init hands
// out, what fields an older caller's struct lacks take, and what the 0.3-era
// kvf_*_default_params (legacy_params.cpp) return.
#pragma once

#include "kvframe/client/kvframe_client.h"

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

inline kvf_session_params session_defaults() {
  kvf_session_params p{};
  p.struct_size = sizeof p;
  p.game_id = "";
  p.mode = KVF_MODE_BLOCK;
  p.block_heads = -1;
  p.blend_ratio = -1;
  p.block_temperature = -1;
  p.adapter = "";
  return p;
}

inline kvf_query_params query_defaults() {
  kvf_query_params p{};
  p.struct_size = sizeof p;
  p.kind = KVF_TASK_TEXT;
  p.npc_id = "";
  p.max_tokens = 64;
  p.top_p = 1.0f;
  return p;
}

}  // namespace kvframe::client
