// A Backend without a model, for the server's unit tests and its fuzz
// target: frames go through json_blocker's FrameStream (the parsing, patches
// and diffs the engine uses), and a query answers at once with a text that
// says which frame it saw: "frame 3 blocks 7: <instruction>", or `answer`
// when set. Tests hook before_answer to advance a fake clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kvframe/json_blocker/frame_stream.h"
#include "kvframe/server_core/backend.h"

namespace kvframe::server::test {

class StateEchoBackend : public Backend {
 public:
  static constexpr uint32_t kMaxContext = 512;

  std::function<void(uint64_t session_id)> before_answer;
  std::function<void(uint64_t session_id)> during_warm_step;  // e.g. moves a fake clock
  // Decoding steps a query takes after before_answer, each calling
  // during_step and then the handler's hook between steps (set_between_steps).
  uint32_t decoding_steps = 0;
  std::function<void(uint64_t session_id)> during_step;
  std::string answer;                 // non-empty: every query's text
  std::vector<uint64_t> answered;     // session ids, in the order their queries ran
  std::vector<std::string> scopes;    // the cache scope of each session opened, in order
  std::vector<int32_t> block_heads;   // the block_heads of each session opened, in order
  std::vector<float> blend_ratios;    // and their blend_ratio
  std::vector<float> temperatures;    // and their block_temperature
  std::vector<uint64_t> warmed;       // session ids, in the order warm() or warm_step() was called
  // warm_step() calls each frame applied from now on takes to be encoded
  // (0: none); a query encodes what is left.
  uint64_t frame_steps = 0;
  double least_query_ms = 0;  // what info() says the least query takes

  BackendInfo info() const override {
    BackendInfo out;
    out.model = "state-echo";
    out.max_context = kMaxContext;
    out.least_query_ms = least_query_ms;
    return out;
  }
  BackendStatus open_session(uint64_t session_id, const SessionConfig& config) override;
  void close_session(uint64_t session_id) override { sessions_.erase(session_id); }
  BackendResult<FrameSummary> apply_frame(uint64_t session_id, fb::FrameFormat format, std::string_view json) override;
  BackendResult<QueryAnswer> run_query(uint64_t session_id, const QuerySpec& query,
                                       const ChunkSink& on_chunk) override;
  void warm(uint64_t session_id) override { warmed.push_back(session_id); }
  uint64_t warm_step(uint64_t session_id, uint32_t max_tokens) override;
  CacheStats cache_stats(const std::string&) const override { return {}; }
  void set_between_steps(std::function<void()> hook) override { between_steps_ = std::move(hook); }

  std::size_t open_sessions() const { return sessions_.size(); }

 private:
  struct Session {
    json_blocker::FrameStream stream;
    uint32_t context = 0;
    uint64_t frames = 0;
    uint64_t steps_left = 0;  // of the current frame's encoding
  };
  std::map<uint64_t, Session> sessions_;
  std::function<void()> between_steps_;
};

}  // namespace kvframe::server::test
