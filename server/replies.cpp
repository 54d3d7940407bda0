#include "replies.h"

namespace kvframe::server::replies {

namespace {

template <class Body>
Buffer finish(flatbuffers::FlatBufferBuilder& builder, uint64_t request_id, flatbuffers::Offset<Body> body) {
  protocol::finish_message(builder, request_id, body);
  return builder.Release();
}

float ms(double value) { return static_cast<float>(value); }

}  // namespace

Buffer hello(uint64_t request_id, const HelloFields& f) {
  flatbuffers::FlatBufferBuilder b(256);
  auto body = fb::CreateHelloReply(b, b.CreateString(f.server_version.data(), f.server_version.size()),
                                   b.CreateString(f.model.data(), f.model.size()), b.CreateVector(*f.modes),
                                   f.default_mode, f.max_message_bytes, f.max_context, f.instance_id,
                                   b.CreateVectorOfStrings(*f.adapters),
                                   b.CreateString(f.default_adapter.data(), f.default_adapter.size()),
                                   f.session_idle_ms);
  return finish(b, request_id, body);
}

Buffer pong(uint64_t request_id) {
  flatbuffers::FlatBufferBuilder b(48);
  return finish(b, request_id, fb::CreatePong(b));
}

Buffer session_opened(uint64_t request_id, uint64_t session_id, uint32_t context_tokens, fb::AttentionMode mode) {
  flatbuffers::FlatBufferBuilder b(64);
  return finish(b, request_id, fb::CreateSessionOpened(b, session_id, context_tokens, mode));
}

Buffer session_closed(uint64_t request_id, uint64_t session_id) {
  flatbuffers::FlatBufferBuilder b(64);
  return finish(b, request_id, fb::CreateSessionClosed(b, session_id));
}

Buffer frame_ack(uint64_t request_id, uint64_t session_id, uint64_t frame_number, bool superseded,
                 const FrameSummary& s) {
  flatbuffers::FlatBufferBuilder b(96);
  return finish(b, request_id,
                fb::CreateFrameAck(b, session_id, frame_number, superseded, s.blocks_total, s.blocks_changed,
                                   s.blocks_removed));
}

Buffer chunk(uint64_t request_id, uint64_t session_id, uint32_t seq, std::string_view text, bool sentence_end) {
  flatbuffers::FlatBufferBuilder b(64 + text.size());
  return finish(b, request_id,
                fb::CreateChunk(b, session_id, seq, b.CreateString(text.data(), text.size()), sentence_end));
}

Buffer result(uint64_t request_id, const ResultFields& f) {
  const QueryAnswer& a = *f.answer;
  flatbuffers::FlatBufferBuilder b(256 + a.text.size() + f.action_json.size());
  auto report = fb::CreateReport(b, f.mode, a.blocks_total, a.blocks_reused, a.blocks_encoded, a.cache_hits,
                                 a.blocks_repositioned, a.tokens_encoded, a.context_tokens, a.query_tokens,
                                 a.generated_tokens, ms(a.ms.partition), ms(a.ms.tokenize), ms(a.ms.encode),
                                 ms(a.ms.reposition), ms(a.ms.query_prefill), ms(a.ms.first_token), ms(a.ms.decode),
                                 ms(a.ms.engine), ms(f.queue_ms), ms(f.server_ms), ms(a.ms.first_chunk),
                                 ms(a.ms.mask), f.batch_size, a.tokens_encoded_superseded);
  auto text = b.CreateString(a.text);
  auto action_json = b.CreateString(f.action_json.data(), f.action_json.size());
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> action;
  if (f.action) action = b.CreateVector(*f.action);
  auto choices = a.choices_json.empty() ? flatbuffers::Offset<flatbuffers::String>() : b.CreateString(a.choices_json);
  return finish(b, request_id,
                fb::CreateResult(b, f.session_id, f.frame_number, text, action_json, a.stop, report, action, choices));
}

Buffer stats(uint64_t request_id, const StatsSnapshot& s, const QueueFields& queue, const CacheStats& cache,
             const MemoryUse& memory, bool server_wide) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::StageStats>> stages;
  for (const StageSummary& stage : s.stages) {
    stages.push_back(fb::CreateStageStats(b, b.CreateString(stage_name(stage.stage)), stage.count, ms(stage.p50_ms),
                                          ms(stage.p99_ms)));
  }
  const Counters& c = s.counters;
  auto body = fb::CreateStats(b, s.uptime_s, queue.sessions, c.frames, c.frames_superseded, c.queries,
                              c.deadline_missed, c.errors, c.busy_rejected, queue.depth, queue.high_water, cache.hits,
                              cache.misses, cache.bytes, b.CreateVector(stages), c.undeliverable, server_wide,
                              c.sessions_expired, memory.weights, memory.session_kv, memory.resident,
                              memory.scratch);
  return finish(b, request_id, body);
}

}  // namespace kvframe::server::replies
