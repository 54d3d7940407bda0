#include "state_echo_backend.h"

namespace kvframe::server::test {

BackendStatus StateEchoBackend::open_session(uint64_t session_id, const SessionConfig& config) {
  if (auto checked = json_blocker::check_rules(config.rules); !checked.ok()) {
    return BackendError{fb::ErrorCode::BadRequest, checked.error().to_string()};
  }
  sessions_.emplace(session_id, Session{json_blocker::FrameStream(config.rules), config.context_tokens, 0});
  scopes.push_back(config.cache_scope);
  block_heads.push_back(config.fidelity.block_heads);
  blend_ratios.push_back(config.fidelity.blend_ratio);
  temperatures.push_back(config.fidelity.block_temperature);
  return {};
}

BackendResult<FrameSummary> StateEchoBackend::apply_frame(uint64_t session_id, fb::FrameFormat format,
                                                          std::string_view json) {
  auto found = sessions_.find(session_id);
  if (found == sessions_.end()) return BackendError{fb::ErrorCode::Internal, "no such session"};
  Session& session = found->second;
  auto diff = format == fb::FrameFormat::Whole
                  ? session.stream.push_whole(json)
                  : session.stream.push_patch(json, format == fb::FrameFormat::MergePatch
                                                        ? json_blocker::PatchFormat::kMergePatch
                                                        : json_blocker::PatchFormat::kJsonPatch);
  if (!diff) return BackendError{fb::ErrorCode::BadJson, diff.error().to_string()};
  ++session.frames;
  session.steps_left = frame_steps;
  return FrameSummary{static_cast<uint32_t>(session.stream.current().size()),
                      static_cast<uint32_t>(diff->changed + diff->added + diff->moved),
                      static_cast<uint32_t>(diff->removed)};
}

uint64_t StateEchoBackend::warm_step(uint64_t session_id, uint32_t max_tokens) {
  warmed.push_back(session_id);
  if (during_warm_step) during_warm_step(session_id);
  auto found = sessions_.find(session_id);
  if (found == sessions_.end()) return 0;
  uint64_t& left = found->second.steps_left;
  if (left > 0) --left;
  return left * max_tokens;
}

BackendResult<QueryAnswer> StateEchoBackend::run_query(uint64_t session_id, const QuerySpec& query,
                                                       const ChunkSink& on_chunk) {
  auto found = sessions_.find(session_id);
  if (found == sessions_.end()) return BackendError{fb::ErrorCode::Internal, "no such session"};
  const Session& session = found->second;
  if (query.instruction.size() + query.max_tokens > session.context) {
    return BackendError{fb::ErrorCode::ContextFull, "instruction + max_tokens exceed the session's context"};
  }
  if (before_answer) before_answer(session_id);
  for (uint32_t step = 0; step < decoding_steps; ++step) {
    if (during_step) during_step(session_id);
    if (between_steps_) between_steps_();
  }
  found->second.steps_left = 0;
  answered.push_back(session_id);
  QueryAnswer out;
  out.text = !answer.empty() ? answer
                             : "frame " + std::to_string(session.frames) + " blocks " +
                                   std::to_string(session.stream.current().size()) + ": " + query.instruction;
  if (on_chunk) {
    const std::size_t half = out.text.size() / 2;
    on_chunk(std::string_view(out.text).substr(0, half), false);
    on_chunk(std::string_view(out.text).substr(half), true);
  }
  out.stop = fb::StopReason::StopToken;
  out.blocks_total = static_cast<uint32_t>(session.stream.current().size());
  out.generated_tokens = 1;
  return out;
}

}  // namespace kvframe::server::test
