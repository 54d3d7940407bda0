// The real Backend: runtime::Engine and one runtime::Session per client
// session. Maps the protocol onto the engine (Query → Task, QueryReport →
// Report) and the engine's errors onto the protocol's: json_blocker's →
// BadJson, a full context → ContextFull, bad parameters → BadRequest, the
// rest → Engine. Nothing escapes as an exception.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "kvframe/runtime/session.h"
#include "kvframe/server/backend.h"

namespace kvframe::server {

class EngineBackend : public Backend {
 public:
  explicit EngineBackend(std::unique_ptr<runtime::Engine> engine);
  ~EngineBackend() override;

  BackendInfo info() const override;
  BackendStatus open_session(uint64_t session_id, const SessionConfig& config) override;
  void close_session(uint64_t session_id) override;
  BackendResult<FrameSummary> apply_frame(uint64_t session_id, fb::FrameFormat format, std::string_view json) override;
  void warm(uint64_t session_id) override;
  uint64_t warm_step(uint64_t session_id, uint32_t max_tokens) override;
  void run_across(const std::vector<SessionQuery>& queries) override;
  BackendResult<QueryAnswer> run_query(uint64_t session_id, const QuerySpec& query,
                                       const ChunkSink& on_chunk) override;
  std::vector<BackendResult<QueryAnswer>> run_queries(uint64_t session_id, const std::vector<QuerySpec>& queries,
                                                      const std::vector<ChunkSink>& on_chunk) override;
  CacheStats cache_stats(const std::string& scope) const override;

 private:
  runtime::Session* find(uint64_t session_id);

  std::unique_ptr<runtime::Engine> engine_;
  double least_query_ms_ = 0;  // one decoding step, timed at construction
  std::unordered_map<uint64_t, std::unique_ptr<runtime::Session>> sessions_;
};

}  // namespace kvframe::server
