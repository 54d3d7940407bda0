#include "kvframe/server/engine_backend.h"

#include <chrono>
#include <exception>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <xxhash.h>

#include "kvframe/protocol/wire_code.h"

namespace kvframe::server {

namespace {

namespace rt = runtime;

BackendError from_runtime(const Error& error) {
  const fb::ErrorCode code = protocol::wire_code(error.code);
  // The client's own mistakes read as they are; the engine's keep the runtime's code name.
  return {code, code == fb::ErrorCode::Engine ? error.to_string() : error.message};
}

BackendError from_json_blocker(const json_blocker::Error& error) {
  return {protocol::wire_code(error.code), error.to_string()};
}

// Thrown by libtorch (c10::Error is a std::exception): out of memory, a device fault.
BackendError from_exception(const std::exception& e) { return {fb::ErrorCode::Engine, e.what()}; }

rt::AttentionMode runtime_mode(fb::AttentionMode mode) {
  switch (mode) {
    case fb::AttentionMode::Full: return rt::AttentionMode::kFull;
    case fb::AttentionMode::Prefix: return rt::AttentionMode::kPrefix;
    case fb::AttentionMode::Block: break;
  }
  return rt::AttentionMode::kBlock;
}

fb::StopReason protocol_stop(rt::StopReason stop) {
  switch (stop) {
    case rt::StopReason::kStopToken: return fb::StopReason::StopToken;
    case rt::StopReason::kContextFull: return fb::StopReason::ContextFull;
    case rt::StopReason::kStopString: return fb::StopReason::StopString;
    case rt::StopReason::kComplete: return fb::StopReason::Complete;
    case rt::StopReason::kMaxTokens: break;
  }
  return fb::StopReason::MaxTokens;
}

uint32_t count(int64_t n) { return static_cast<uint32_t>(n); }

// Result.choices_json (protocol/kvframe.fbs); empty when there were none.
std::string choices_json(const std::vector<rt::ChoicePoint>& choices) {
  if (choices.empty()) return {};
  nlohmann::json out = nlohmann::json::array();
  for (const rt::ChoicePoint& point : choices) {
    nlohmann::json options = nlohmann::json::array();
    for (const rt::ChoiceOption& option : point.options) options.push_back({{"text", option.text}, {"p", option.probability}});
    out.push_back({{"prefix", point.prefix}, {"options", std::move(options)}});
  }
  // Token bytes may split a UTF-8 character: replaced, never refused.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

QueryAnswer answer_of(rt::Answer& a) {
  const rt::QueryReport& r = a.report;
  QueryAnswer out;
  out.text = std::move(a.text);
  out.choices_json = choices_json(a.choices);
  out.stop = protocol_stop(a.stop);
  out.blocks_total = count(r.blocks_total);
  out.blocks_reused = count(r.blocks_reused);
  out.blocks_encoded = count(r.blocks_encoded);
  out.cache_hits = count(r.cache_hits);
  out.blocks_repositioned = count(r.blocks_repositioned);
  out.tokens_encoded = count(r.tokens_encoded);
  out.context_tokens = count(r.context_tokens);
  out.query_tokens = count(r.query_tokens);
  out.generated_tokens = count(r.generated_tokens);
  out.tokens_encoded_superseded = count(r.tokens_encoded_superseded);
  out.ms = {r.ms.partition,   r.ms.tokenize,    r.ms.encode,  r.ms.reposition, r.ms.query_prefill,
            r.ms.first_token, r.ms.first_chunk, r.ms.decode, r.ms.mask,       r.ms.total};
  return out;
}

rt::Task task_of(const QuerySpec& query, const ChunkSink& on_chunk, const std::function<void()>& between_steps) {
  rt::Task task;
  task.instruction = query.instruction;
  task.output_schema = query.output_schema;
  task.generate.max_tokens = static_cast<int32_t>(query.max_tokens);
  task.generate.sampling = {query.temperature, query.top_k, query.top_p, query.seed};
  task.generate.stop_strings = query.stop;
  task.generate.between_steps = between_steps;
  if (on_chunk) task.on_chunk = [on_chunk](const rt::TextChunk& c) { on_chunk(c.text, c.sentence_end); };
  return task;
}

// The store's scope for the server's scope name. Never 0: that is the
// scope of unscoped sessions. A 64-bit hash: two tenants collide with
// probability ~n²/2⁶⁵, and even then block keys differ unless the 128-bit
// content hashes also collide.
kv_diff::Scope store_scope(const std::string& scope) {
  const uint64_t hash = XXH3_64bits(scope.data(), scope.size());
  return hash == 0 ? 1 : hash;
}

// One decoding step with a short context, the second of two (the first pays
// for allocations a query will not): a floor under any query's time. On a
// thread of its own, as the engine's model is loaded (an OpenMP team left
// idle on the main thread slows the engine thread's).
double one_step_ms(const rt::Model& model) {
  double ms = 0;
  std::thread([&] {
    try {
      auto cache = model.new_cache(8);
      if (!cache) return;
      const at::Tensor token = at::zeros({1}, at::TensorOptions().dtype(at::kLong).device(model.device()));
      for (int i = 0; i < 2; ++i) {
        const auto start = std::chrono::steady_clock::now();
        if (!model.forward(token, *cache)) return;
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
    } catch (const std::exception&) {
      ms = 0;  // no floor: deadlines are then checked from the first query on
    }
  }).join();
  return ms;
}

BackendError unknown_session(uint64_t id) {
  return {fb::ErrorCode::Internal, "the engine has no session " + std::to_string(id)};
}

}  // namespace

EngineBackend::EngineBackend(std::unique_ptr<rt::Engine> engine,
                             std::map<std::string, std::shared_ptr<rt::LoraAdapter>> adapters)
    : engine_(std::move(engine)), adapters_(std::move(adapters)), least_query_ms_(one_step_ms(engine_->model())) {
  if (engine_->default_adapter() && default_adapter_name() == "default") {
    adapters_["default"] = engine_->default_adapter();
  }
}

std::string EngineBackend::default_adapter_name() const {
  const std::shared_ptr<rt::LoraAdapter>& fallback = engine_->default_adapter();
  if (!fallback) return "none";
  for (const auto& [name, adapter] : adapters_) {
    if (adapter == fallback) return name;
  }
  return "default";
}
EngineBackend::~EngineBackend() = default;

BackendInfo EngineBackend::info() const {
  const rt::ModelConfig& config = engine_->model().config();
  BackendInfo info{config.name.empty() ? config.arch : config.name, static_cast<uint32_t>(config.n_ctx_train),
                   least_query_ms_, {}, default_adapter_name()};
  for (const auto& named : adapters_) info.adapters.push_back(named.first);
  const rt::Model::WeightsMemory weights = engine_->model().weights_memory();
  info.weights_bytes = static_cast<uint64_t>(weights.stored_bytes + weights.dense_bytes);
  info.dense_weights_bytes = static_cast<uint64_t>(weights.dense_bytes);
  return info;
}

rt::Session* EngineBackend::find(uint64_t session_id) {
  auto found = sessions_.find(session_id);
  return found == sessions_.end() ? nullptr : found->second.get();
}

BackendStatus EngineBackend::open_session(uint64_t session_id, const SessionConfig& config) {
  rt::SessionParams params;
  params.mode = runtime_mode(config.mode);
  params.system_prompt = config.system_prompt;
  params.rules = config.rules;
  params.context = config.context_tokens;
  params.fidelity = config.fidelity;
  if (!config.cache_scope.empty()) params.cache_scope = store_scope(config.cache_scope);
  // Empty: the engine's default adapter (SessionParams::adapter left unset).
  if (config.adapter == "none") {
    params.adapter = std::shared_ptr<rt::LoraAdapter>();
  } else if (!config.adapter.empty()) {
    auto named = adapters_.find(config.adapter);
    if (named == adapters_.end()) {
      return BackendError{fb::ErrorCode::UnknownAdapter, "no adapter named '" + config.adapter + "' is loaded"};
    }
    params.adapter = named->second;
  }
  try {
    auto session = rt::Session::open(*engine_, params);
    if (!session) return from_runtime(session.error());
    sessions_[session_id] = std::move(session).value();
  } catch (const std::exception& e) {
    return from_exception(e);
  }
  return {};
}

void EngineBackend::close_session(uint64_t session_id) {
  sessions_.erase(session_id);
#if defined(__GLIBC__)
  // A session's KV buffers are large blocks freed into glibc's arenas, which
  // keep them: without this a server's memory after a peak of sessions stays
  // near the peak (docs/measured.md, "Memory after a load peak"). Closing is
  // rare next to frames and queries, and trimming costs milliseconds.
  malloc_trim(0);
#endif
}

BackendResult<FrameSummary> EngineBackend::apply_frame(uint64_t session_id, fb::FrameFormat format,
                                                       std::string_view json) {
  rt::Session* session = find(session_id);
  if (!session) return unknown_session(session_id);
  try {
    auto diff = format == fb::FrameFormat::Whole
                    ? session->update(json)
                    : session->update_patch(json, format == fb::FrameFormat::MergePatch
                                                      ? json_blocker::PatchFormat::kMergePatch
                                                      : json_blocker::PatchFormat::kJsonPatch);
    if (!diff) return from_json_blocker(diff.error());
    return FrameSummary{count(static_cast<int64_t>(diff->unchanged + diff->changed + diff->added + diff->moved)),
                        count(static_cast<int64_t>(diff->changed + diff->added + diff->moved)),
                        count(static_cast<int64_t>(diff->removed))};
  } catch (const std::exception& e) {
    return from_exception(e);
  }
}

void EngineBackend::warm(uint64_t session_id) {
  // An error here is the next query's to report: it meets the same frame.
  if (rt::Session* session = find(session_id)) (void)session->warm();
}

uint64_t EngineBackend::warm_step(uint64_t session_id, uint32_t max_tokens) {
  rt::Session* session = find(session_id);
  if (!session) return 0;
  auto left = session->warm_step(max_tokens);
  return left ? static_cast<uint64_t>(*left) : 0;  // an error is the next query's to report
}

BackendResult<QueryAnswer> EngineBackend::run_query(uint64_t session_id, const QuerySpec& query,
                                                    const ChunkSink& on_chunk) {
  rt::Session* session = find(session_id);
  if (!session) return unknown_session(session_id);
  try {
    auto answer = session->query(task_of(query, on_chunk, between_steps_));
    if (!answer) return from_runtime(answer.error());
    return answer_of(*answer);
  } catch (const std::exception& e) {
    return from_exception(e);
  }
}

std::vector<BackendResult<QueryAnswer>> EngineBackend::run_queries(uint64_t session_id,
                                                                   const std::vector<QuerySpec>& queries,
                                                                   const std::vector<ChunkSink>& on_chunk) {
  std::vector<BackendResult<QueryAnswer>> out;
  auto fail_all = [&](const BackendError& error) {
    out.clear();
    for (size_t i = 0; i < queries.size(); ++i) out.emplace_back(error);
    return out;
  };
  rt::Session* session = find(session_id);
  if (!session) return fail_all(unknown_session(session_id));
  std::vector<rt::Task> tasks;
  for (size_t i = 0; i < queries.size(); ++i) tasks.push_back(task_of(queries[i], on_chunk[i], between_steps_));
  try {
    for (auto& answer : session->query_batch(tasks)) {
      out.push_back(answer ? BackendResult<QueryAnswer>(answer_of(*answer))
                           : BackendResult<QueryAnswer>(from_runtime(answer.error())));
    }
  } catch (const std::exception& e) {
    return fail_all(from_exception(e));
  }
  return out;
}

void EngineBackend::run_across(const std::vector<SessionQuery>& queries) {
  // Each query answered exactly once: by query_together as its answer
  // completes, or below when it never started.
  std::vector<bool> answered(queries.size(), false);
  auto answer = [&](size_t i, BackendResult<QueryAnswer> result) {
    answered[i] = true;
    queries[i].on_answer(std::move(result));
  };
  std::vector<rt::Session::SessionTask> tasks;
  for (size_t i = 0; i < queries.size(); ++i) {
    rt::Session* session = find(queries[i].session_id);
    if (!session) {
      answer(i, unknown_session(queries[i].session_id));
      continue;
    }
    auto on_answer = [&answer, i](Result<rt::Answer>& a) {
      answer(i, a ? BackendResult<QueryAnswer>(answer_of(*a)) : BackendResult<QueryAnswer>(from_runtime(a.error())));
    };
    tasks.push_back({session, task_of(queries[i].spec, queries[i].on_chunk, between_steps_), on_answer});
  }
  BackendError unstarted{fb::ErrorCode::Internal, "the engine did not run the query"};
  try {
    const auto results = rt::Session::query_together(tasks);
    for (const auto& r : results) {
      if (!r) unstarted = from_runtime(r.error());  // all refused before starting share one reason
    }
  } catch (const std::exception& e) {
    unstarted = from_exception(e);
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    if (!answered[i]) answer(i, unstarted);
  }
}

CacheStats EngineBackend::cache_stats(const std::string& scope) const {
  if (scope.empty()) {
    const kv_diff::StoreStats s = engine_->store().stats();
    return {static_cast<uint64_t>(s.hits), static_cast<uint64_t>(s.misses), static_cast<uint64_t>(s.bytes)};
  }
  const kv_diff::ScopeStats s = engine_->store().scope_stats(store_scope(scope));
  return {static_cast<uint64_t>(s.hits), static_cast<uint64_t>(s.misses), static_cast<uint64_t>(s.bytes)};
}

uint64_t EngineBackend::session_kv_bytes(fb::AttentionMode mode, uint32_t context) const {
  return static_cast<uint64_t>(engine_->max_session_kv_bytes(runtime_mode(mode), context));
}

}  // namespace kvframe::server
