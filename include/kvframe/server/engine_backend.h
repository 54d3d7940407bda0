// The real Backend: runtime::Engine and one runtime::Session per client
// session. Maps the protocol onto the engine (Query → Task, QueryReport →
// Report) and the engine's errors onto the protocol's (protocol::wire_code:
// a bad frame → BadJson, a full context → ContextFull, bad parameters →
// BadRequest, the rest → Engine). Nothing escapes as an exception.
//
// LoRA adapters: the engine's default adapter (kvframe-serve --lora) and
// named ones (--adapter NAME=FILE); a session runs the one its OpenSession
// names (runtime::SessionParams::adapter). The engine thread runs one
// session's work at a time, so sessions of different adapters never share
// a pass: queries of several sessions answered together are grouped by
// adapter (runtime::Session::query_together).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "kvframe/runtime_engine/session.h"
#include "kvframe/server_core/backend.h"

namespace kvframe::server {

class EngineBackend : public Backend {
 public:
  // `adapters`: the named ones sessions may ask for besides the engine's
  // default. The default is listed under its name there, or "default" when
  // it is none of them (a file of --lora), or is "none".
  explicit EngineBackend(std::unique_ptr<runtime::Engine> engine,
                         std::map<std::string, std::shared_ptr<runtime::LoraAdapter>> adapters = {});
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
  void set_between_steps(std::function<void()> hook) override { between_steps_ = std::move(hook); }
  // The most KV a session of `mode` and `context` tokens comes to hold
  // (SchedulerLimits::kv_bytes_of).
  uint64_t session_kv_bytes(fb::AttentionMode mode, uint32_t context) const;

 private:
  runtime::Session* find(uint64_t session_id);
  std::string default_adapter_name() const;

  std::unique_ptr<runtime::Engine> engine_;
  std::map<std::string, std::shared_ptr<runtime::LoraAdapter>> adapters_;
  double least_query_ms_ = 0;  // one decoding step, timed at construction
  std::unordered_map<uint64_t, std::unique_ptr<runtime::Session>> sessions_;
  std::function<void()> between_steps_;  // every query's GenerateParams::between_steps
};

}  // namespace kvframe::server
