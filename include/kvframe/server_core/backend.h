// The engine behind the server, as the server sees it. The scheduler, the
// door checks and the ZeroMQ loop (kvframe::server_core) are written against
// this interface and need no libtorch, so they can be unit tested and fuzzed
// with engines that answer instantly; EngineBackend (engine_backend.h) is the
// real one over runtime::Engine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/block_fidelity.h"
#include "kvframe/common/result.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/protocol/option_specs.h"
#include "kvframe/protocol/protocol.h"

namespace kvframe::server {

namespace fb = protocol::fb;

// Errors carry the protocol's code so they reach the client unchanged.
struct BackendError {
  fb::ErrorCode code = fb::ErrorCode::Engine;
  std::string message;  // what went wrong and what to do next
};
template <class T>
using BackendResult = common::Result<T, BackendError>;
using BackendStatus = common::Result<void, BackendError>;

struct BackendInfo {
  std::string model;      // the model's name, for HelloReply and logs
  uint32_t max_context = 0;  // the most tokens a session may hold
  // The least a query takes (one decoding step, measured at startup): what
  // deadlines are checked against before any query has finished.
  double least_query_ms = 0;
  // The LoRA adapters sessions may name (SessionConfig::adapter), and the
  // one they get when they name none; "none" is the base model.
  std::vector<std::string> adapters;
  std::string default_adapter = "none";
  uint64_t weights_bytes = 0;  // what the model's weights take (Stats)
  // Of weights_bytes, what lives in anonymous memory (dense tensors); the
  // rest is the mapped file's pages.
  uint64_t dense_weights_bytes = 0;
};

struct SessionConfig {
  fb::AttentionMode mode = fb::AttentionMode::Block;
  std::string system_prompt;  // empty: the chat template's default
  json_blocker::Rules rules;
  uint32_t context_tokens = 0;  // resolved by the server: never 0 here
  common::BlockFidelity fidelity;  // resolved by the server: never -1 here
  // The adapter the session runs: one of BackendInfo::adapters, "none", or
  // empty: the default (the server resolves it to its name).
  std::string adapter;
  // The block-store scope, derived by the server from the client's identity
  // (never sent by the client): sessions of one scope share encoded blocks,
  // sessions of different scopes cannot tell what the other sent.
  std::string cache_scope;
};

// What a Frame changed (json_blocker's FrameDiff, counted).
struct FrameSummary {
  uint32_t blocks_total = 0;
  uint32_t blocks_changed = 0;  // changed + added + moved
  uint32_t blocks_removed = 0;
};

// A query as the client sent it (protocol/options.json's fields): the backend
// runs instruction, output_schema, max_tokens, stop and the sampling; the
// scheduler reads the rest.
using QuerySpec = protocol::QuerySpec;

// Milliseconds per engine stage (runtime::StageTimes).
struct EngineStages {
  double partition = 0, tokenize = 0, encode = 0, reposition = 0, query_prefill = 0;
  double first_token = 0, first_chunk = 0, decode = 0, mask = 0, engine = 0;
};

// Streamed text as it becomes final: whole UTF-8 characters; sentence_end
// when the piece ends a sentence.
using ChunkSink = std::function<void(std::string_view text, bool sentence_end)>;

struct QueryAnswer {
  std::string text;  // with an output schema: the JSON value, valid against it
  std::string choices_json;  // with an output schema: protocol Result.choices_json
  fb::StopReason stop = fb::StopReason::MaxTokens;
  uint32_t blocks_total = 0, blocks_reused = 0, blocks_encoded = 0, cache_hits = 0, blocks_repositioned = 0;
  uint32_t tokens_encoded = 0, context_tokens = 0, query_tokens = 0, generated_tokens = 0;
  uint32_t tokens_encoded_superseded = 0;  // runtime::QueryReport's
  EngineStages ms;
};

struct CacheStats {
  uint64_t hits = 0, misses = 0, bytes = 0;
};

// Sessions are named by the server's ids. Every member but info() and
// cache_stats() is called from the server's one engine thread only.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual BackendInfo info() const = 0;
  virtual BackendStatus open_session(uint64_t session_id, const SessionConfig& config) = 0;
  virtual void close_session(uint64_t session_id) = 0;
  // A rejected frame leaves the session on its previous one.
  virtual BackendResult<FrameSummary> apply_frame(uint64_t session_id, fb::FrameFormat format,
                                                  std::string_view json) = 0;
  // on_chunk (may be empty) receives the answer's text as it is produced.
  // A bad output schema is BadRequest; one that cannot be met within
  // max_tokens is Unsatisfiable.
  virtual BackendResult<QueryAnswer> run_query(uint64_t session_id, const QuerySpec& query,
                                               const ChunkSink& on_chunk) = 0;
  // Several queries on the session's current frame (different NPCs), one
  // answer each, in order. A backend that can batches them (EngineBackend
  // decodes them as one batch); this default runs them one by one.
  virtual std::vector<BackendResult<QueryAnswer>> run_queries(uint64_t session_id,
                                                              const std::vector<QuerySpec>& queries,
                                                              const std::vector<ChunkSink>& on_chunk) {
    std::vector<BackendResult<QueryAnswer>> answers;
    for (size_t i = 0; i < queries.size(); ++i) answers.push_back(run_query(session_id, queries[i], on_chunk[i]));
    return answers;
  }
  // One query of each of several sessions (different games), answered
  // together: EngineBackend decodes their answers in one pass a step for all
  // (runtime::Session::query_together). Each query's answer goes to its
  // on_answer as soon as it is complete — before the others' — exactly once.
  // This default runs them one after another.
  struct SessionQuery {
    uint64_t session_id = 0;
    QuerySpec spec;
    ChunkSink on_chunk;
    std::function<void(BackendResult<QueryAnswer>)> on_answer;
  };
  virtual void run_across(const std::vector<SessionQuery>& queries) {
    for (const SessionQuery& q : queries) q.on_answer(run_query(q.session_id, q.spec, q.on_chunk));
  }
  // Encodes the session's current frame ahead of its next query, while the
  // engine has nothing else to do (EngineBackend: runtime::Session::warm).
  // Best effort: a failure is the next query's to report. Default: nothing.
  virtual void warm(uint64_t /*session_id*/) {}
  // warm() a step at a time (runtime::Session::warm_step): encodes at most
  // max_tokens (at least one block) of what the session's current frame
  // still needs and returns the tokens left; the step that leaves 0 has
  // warmed the frame whole. Best effort, as warm(): 0 after a failure, and
  // for a session that is gone. Default: warm() whole.
  virtual uint64_t warm_step(uint64_t session_id, uint32_t /*max_tokens*/) {
    warm(session_id);
    return 0;
  }
  // Called by the engine between two decoding steps of any query (lone,
  // batched or joined): the handler serves another principal's waiting
  // work there, so one long answer does not hold other games behind it.
  // The hook may call every member above for other sessions, never for
  // the ones being answered. A backend that cannot pause ignores it.
  virtual void set_between_steps(std::function<void()> /*hook*/) {}
  // Thread-safe: the I/O thread reads it for Stats. One scope's share, or
  // with an empty scope the whole store's.
  virtual CacheStats cache_stats(const std::string& scope) const = 0;
};

}  // namespace kvframe::server
