// A session: frames in (json_blocker), queries out (the mode's KvContext,
// then decoding). query() is where one frame's work happens, top to bottom;
// query_batch() shares that work among several tasks and decodes them as one
// batch.

#include <algorithm>

#include "kv_context.h"
#include "kvframe/json_blocker/frame_stream.h"
#include "stopwatch.h"

namespace kvframe::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// A task ready to run: its final block, and what decoding it needs.
struct ReadyTask {
  std::vector<TokenId> final_block;
  GenerateParams generate;  // stop tokens and schema resolved
};

// Times the first streamed chunk of one answer, then passes chunks on.
struct ChunkTimer {
  Clock::time_point start;
  double first_ms = 0;
  ChunkCallback wrap(const ChunkCallback& on_chunk) {
    if (!on_chunk) return {};
    return [this, on_chunk](const TextChunk& chunk) {
      if (first_ms == 0) first_ms = ms_between(start, Clock::now());
      on_chunk(chunk);
    };
  }
};

// Fills the answer from a finished decoding; `prefill_done` is when its
// final block's logits were ready.
void finish_answer(Answer& answer, Generation generation, const Decoder& decoder, Clock::time_point prefill_done,
                   const ChunkTimer& timer) {
  StageTimes& ms = answer.report.ms;
  const Clock::time_point first = decoder.first_token_at().value_or(prefill_done);
  const Clock::time_point done = decoder.done_at().value_or(Clock::now());
  ms.first_token = ms.partition + ms.tokenize + ms.encode + ms.reposition + ms.query_prefill +
                   ms_between(prefill_done, first);
  ms.decode = ms_between(first, done);
  ms.total = ms.first_token + ms.decode;
  ms.first_chunk = timer.first_ms > 0 ? ms.partition + timer.first_ms : 0;
  ms.mask = generation.stats.mask_seconds * 1000;
  answer.report.generated_tokens = static_cast<int64_t>(generation.tokens.size());
  answer.report.decode_steps = generation.stats.decode_steps;
  answer.report.forced_tokens = generation.stats.forced_tokens;
  answer.text = std::move(generation.text);
  answer.tokens = std::move(generation.tokens);
  answer.choices = std::move(generation.choices);
  answer.stop = generation.stop;
}

// A query between its final block's prefill and its answer: what decoding
// needs, and what the answer is finished from. Held by pointer: the
// decoder's chunk callback points at the timer.
struct RunningQuery {
  Answer answer;
  ReadyTask task;
  ChunkTimer timer;
  Clock::time_point prefill_done;
  std::unique_ptr<Decoder> decoder;
  GenerateStats stats;
};

// The session's adapter applied while it lives, the engine's default again
// after: outside a session's calls the model runs the default adapter, and
// sessions with different adapters take turns on it. The adapter's shape was
// checked when the session opened, so switching cannot fail here.
class AdapterInUse {
 public:
  AdapterInUse(Engine& engine, const SessionParams& params) : engine_(engine) {
    engine_.use_adapter(*params.adapter);
  }
  ~AdapterInUse() { engine_.use_adapter(engine_.default_adapter()); }
  AdapterInUse(const AdapterInUse&) = delete;
  AdapterInUse& operator=(const AdapterInUse&) = delete;

 private:
  Engine& engine_;
};

// What Session::warm() and warm_step() encoded of the current frame.
struct WorkAhead {
  int64_t blocks_encoded = 0, cache_hits = 0, blocks_repositioned = 0, tokens_encoded = 0;
  double encode_ms = 0;
};

}  // namespace

struct Session::Impl {
  Engine& engine;
  SessionParams params;
  json_blocker::FrameStream stream;
  PromptFrame frame;  // prefix tokens and the final block's closing text
  BlockTokenizer blocks;
  BlockOrderer order;  // the rules' BlockOrder
  std::unique_ptr<KvContext> context;
  double pending_partition_ms = 0;  // frames since the last query
  WorkAhead ahead;                  // warm() and warm_step() on the current frame
  int64_t superseded_tokens = 0;    // tokens they encoded for frames superseded since the last query

  // Blocks and tokens that warm() encoded (and blocks it re-positioned) count in the query's report,
  // with the time it took: the work its frame took, done ahead or not. Blocks warmed count as
  // encoded (or hits) there, not as reused, so the report's blocks still add up.
  void count_ahead(QueryReport& report) {
    report.blocks_encoded += ahead.blocks_encoded;
    report.cache_hits += ahead.cache_hits;
    report.blocks_reused = std::max<int64_t>(0, report.blocks_reused - ahead.blocks_encoded - ahead.cache_hits);
    report.blocks_repositioned += ahead.blocks_repositioned;
    report.tokens_encoded += ahead.tokens_encoded;
    report.ms.encode += ahead.encode_ms;
    report.tokens_encoded_superseded = superseded_tokens;
    ahead = {};
    superseded_tokens = 0;
  }

  json_blocker::Result<json_blocker::FrameDiff> accepted(json_blocker::Result<json_blocker::FrameDiff> diff) {
    if (diff) {
      const json_blocker::FrameTimings& t = stream.last_timings();
      pending_partition_ms += t.patch_ms + t.partition_ms + t.diff_ms;
      // A report tells how its own frame's blocks came to be: what was
      // encoded ahead for an earlier frame is, in this one, reused, and
      // counted apart as work the stream cost.
      superseded_tokens += ahead.tokens_encoded;
      ahead = {};
    }
    return diff;
  }

  // Tokenizes the current frame's new blocks; fills the report's sizes.
  FramePrompt frame_prompt(QueryReport& report) {
    const auto& block_tokens = order.order(blocks.update(engine.tokenizer(), stream.current()));
    report.mode = params.mode;
    report.ms.partition = pending_partition_ms;
    report.blocks_total = static_cast<int64_t>(block_tokens.size());
    report.context_tokens = static_cast<int64_t>(frame.prefix.size()) + blocks.tokens();
    return {&frame.prefix, &block_tokens};
  }

  Result<ReadyTask> ready(const Task& task, int64_t context_tokens);
  Status warm();
  Result<int64_t> warm_step(int64_t max_tokens);
  // query() in parts around decoding: start() brings the KV up to date and
  // readies the task, prefilled() takes its final block's logits (begin()
  // is both, the final block run between them); end() takes the decoded answer.
  Result<std::unique_ptr<RunningQuery>> start(const Task& task);
  void prefilled(RunningQuery& run, const at::Tensor& logits, const ChunkCallback& on_chunk);
  Result<std::unique_ptr<RunningQuery>> begin(const Task& task);
  Result<Answer> end(RunningQuery& run, const Status& decoded);
  Result<Answer> query(const Task& task);
  std::vector<Result<Answer>> query_batch(const std::vector<Task>& tasks);
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::open(Engine& engine, const SessionParams& requested) {
  SessionParams params = requested;
  if (!params.adapter) params.adapter = engine.default_adapter();
  // The adapter's shape is checked once, here.
  if (auto status = engine.use_adapter(*params.adapter); !status.ok()) return status.error();
  AdapterInUse adapter(engine, params);
  if (auto checked = json_blocker::check_rules(params.rules); !checked.ok()) {
    return Error{ErrorCode::kInvalidArgument, "bad block rules: " + checked.error().to_string()};
  }
  if (params.context < 16) return Error{ErrorCode::kInvalidArgument, "a session needs a context of at least 16 tokens"};
  // Every mode's positions run to the context: block mode's assembled cache,
  // its branches and recomputed entries included, not only a plain cache.
  if (auto fits = engine.model().check_positions(
          params.context, "a session context of " + std::to_string(params.context) + " tokens");
      !fits.ok()) {
    return fits.error();
  }
  if (auto bad = common::fidelity_out_of_range(params.fidelity)) return Error{ErrorCode::kInvalidArgument, *bad};
  auto context = params.mode == AttentionMode::kBlock ? make_block_context(engine, params)
                                                       : make_causal_context(engine.model(), params.mode, params.context);
  if (!context) return context.error();
  PromptFrame frame = make_prompt_frame(engine.tokenizer(), engine.chat_template(), params.system_prompt);
  auto impl = std::unique_ptr<Impl>(new Impl{engine, params, json_blocker::FrameStream(params.rules), std::move(frame),
                                             BlockTokenizer(), BlockOrderer(params.rules.order),
                                             std::move(context).value(), 0.0, WorkAhead{}});
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const SessionParams& Session::params() const { return impl_->params; }
uint64_t Session::frames() const { return impl_->stream.frames(); }

json_blocker::Result<json_blocker::FrameDiff> Session::update(std::string_view frame_json) {
  return impl_->accepted(impl_->stream.push_whole(frame_json));
}

json_blocker::Result<json_blocker::FrameDiff> Session::update_patch(std::string_view patch,
                                                                    json_blocker::PatchFormat format) {
  return impl_->accepted(impl_->stream.push_patch(patch, format));
}

Status Session::warm() {
  AdapterInUse adapter(impl_->engine, impl_->params);
  return impl_->warm();
}

Result<int64_t> Session::warm_step(int64_t max_tokens) {
  AdapterInUse adapter(impl_->engine, impl_->params);
  return impl_->warm_step(max_tokens);
}

Result<Answer> Session::query(const Task& task) {
  AdapterInUse adapter(impl_->engine, impl_->params);
  return impl_->query(task);
}

std::vector<Result<Answer>> Session::query_batch(const std::vector<Task>& tasks) {
  AdapterInUse adapter(impl_->engine, impl_->params);
  return impl_->query_batch(tasks);
}

// Everything about one task that can be checked before any model work: its
// limits, its schema, and whether it fits the context.
Result<ReadyTask> Session::Impl::ready(const Task& task, int64_t context_tokens) {
  ReadyTask out;
  out.generate = task.generate;
  if (out.generate.stop_tokens.empty()) out.generate.stop_tokens = engine.stop_tokens();
  if (!task.output_schema.empty()) {
    auto compiled = engine.schemas().get(task.output_schema, params.cache_scope);
    if (!compiled) return compiled.error().to_error();
    out.generate.schema = std::move(compiled).value();
    // The schema's vocabulary ends the JSON with the engine's stop tokens.
    out.generate.stop_tokens = engine.stop_tokens();
  }
  if (auto checked = Decoder::check(out.generate); !checked.ok()) return checked.error();
  out.final_block = engine.tokenizer().encode(task.instruction + frame.final_suffix);
  if (out.final_block.empty()) return Error{ErrorCode::kInvalidArgument, "the task's instruction is empty"};
  const auto query_tokens = static_cast<int64_t>(out.final_block.size());
  const int64_t needed = context_tokens + query_tokens + out.generate.max_tokens;
  if (needed > params.context) {
    return Error{ErrorCode::kContextFull,
                 "this frame needs " + std::to_string(needed) + " tokens (state " + std::to_string(context_tokens) +
                     " + task " + std::to_string(query_tokens) + " + max_tokens " +
                     std::to_string(out.generate.max_tokens) + ") but the session holds " +
                     std::to_string(params.context) + " — open it with a larger context or drop paths in the rules"};
  }
  return out;
}

Status Session::Impl::warm() {
  // full is the baseline that recomputes the whole prompt at every query.
  if (stream.frames() == 0 || params.mode == AttentionMode::kFull) return {};
  Stopwatch watch(engine.model().device());
  QueryReport report;
  const FramePrompt prompt = frame_prompt(report);
  const Status prepared = context->prepare(prompt, report);
  context->finish({});
  if (!prepared.ok()) return prepared;
  ahead.blocks_encoded += report.blocks_encoded;
  ahead.cache_hits += report.cache_hits;
  ahead.blocks_repositioned += report.blocks_repositioned;
  ahead.tokens_encoded += report.tokens_encoded;
  ahead.encode_ms += watch.lap();
  return {};
}

Result<int64_t> Session::Impl::warm_step(int64_t max_tokens) {
  if (max_tokens <= 0 || stream.frames() == 0 || params.mode == AttentionMode::kFull) {
    if (auto status = warm(); !status.ok()) return status.error();
    return int64_t{0};
  }
  Stopwatch watch(engine.model().device());
  QueryReport report;
  const FramePrompt prompt = frame_prompt(report);
  auto left = context->encode_ahead(prompt, max_tokens, report);
  if (!left) return left.error();
  ahead.blocks_encoded += report.blocks_encoded;
  ahead.cache_hits += report.cache_hits;
  ahead.tokens_encoded += report.tokens_encoded;
  ahead.encode_ms += watch.lap();
  if (*left > 0) return left;
  // Nothing left to encode: placing the blocks (and the fidelity knobs' work) finishes the frame.
  if (auto status = warm(); !status.ok()) return status.error();
  return int64_t{0};
}

Result<std::unique_ptr<RunningQuery>> Session::Impl::start(const Task& task) {
  if (stream.frames() == 0) {
    return Error{ErrorCode::kInvalidArgument, "query() before the first frame: send the game state with update()"};
  }
  const Model& model = engine.model();
  Stopwatch watch(model.device());
  auto run = std::make_unique<RunningQuery>();
  run->timer.start = Clock::now();
  QueryReport& report = run->answer.report;

  // Tokenize: new block texts, and the final block.
  FramePrompt prompt = frame_prompt(report);
  auto ready_task = ready(task, report.context_tokens);
  if (!ready_task) return ready_task.error();
  run->task = std::move(ready_task).value();
  const std::vector<TokenId>& final_block = run->task.final_block;
  report.query_tokens = static_cast<int64_t>(final_block.size());
  prompt.tail = report.query_tokens + run->task.generate.max_tokens;
  report.ms.tokenize = watch.lap();

  // The mode brings the frame's KV up to date; the final block runs after it.
  if (Status prepared = context->prepare(prompt, report); !prepared.ok()) {
    context->finish({});
    return prepared.error();
  }
  count_ahead(report);
  return run;
}

void Session::Impl::prefilled(RunningQuery& run, const at::Tensor& logits, const ChunkCallback& on_chunk) {
  run.answer.report.tokens_encoded += run.answer.report.query_tokens;
  run.prefill_done = Clock::now();
  run.answer.first_logits = logits.reshape({-1}).to(at::kCPU);
  run.decoder = std::make_unique<Decoder>(engine.tokenizer(), run.task.generate, run.timer.wrap(on_chunk));
}

Result<std::unique_ptr<RunningQuery>> Session::Impl::begin(const Task& task) {
  auto run = start(task);
  if (!run) return run.error();
  Stopwatch watch(engine.model().device());
  const std::vector<TokenId>& final_block = (*run)->task.final_block;
  auto logits = runtime::prefill(engine.model(), final_block, context->cache());
  if (!logits) {
    context->finish(final_block);
    return logits.error();
  }
  (*run)->answer.report.ms.query_prefill = watch.lap();
  prefilled(**run, *logits, task.on_chunk);
  return run;
}

Result<Answer> Session::Impl::end(RunningQuery& run, const Status& decoded) {
  Generation generation = run.decoder->finish();
  generation.stats.decode_steps = run.stats.decode_steps;
  generation.stats.forced_tokens = run.stats.forced_tokens;
  std::vector<TokenId> appended = run.task.final_block;
  appended.insert(appended.end(), generation.tokens.begin(), generation.tokens.end());
  context->finish(appended);
  if (!decoded.ok()) return decoded.error();
  pending_partition_ms = 0;
  finish_answer(run.answer, std::move(generation), *run.decoder, run.prefill_done, run.timer);
  return std::move(run.answer);
}

Result<Answer> Session::Impl::query(const Task& task) {
  auto run = begin(task);
  if (!run) return run.error();
  RunningQuery& r = **run;
  const Status decoded = decode(engine.model(), context->cache(), r.answer.first_logits, *r.decoder, r.stats);
  return end(r, decoded);
}

std::vector<Result<Answer>> Session::query_together(const std::vector<SessionTask>& tasks) {
  std::vector<Result<Answer>> results;
  auto fail_all = [&](const std::string& why) {
    results.assign(tasks.size(), Result<Answer>(Error{ErrorCode::kInvalidArgument, why}));
    return results;
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i].session) return fail_all("query_together(): task " + std::to_string(i) + " has no session");
    if (&tasks[i].session->impl_->engine != &tasks[0].session->impl_->engine) {
      return fail_all("query_together(): the sessions belong to different engines");
    }
    for (size_t j = 0; j < i; ++j) {
      if (tasks[j].session == tasks[i].session) {
        return fail_all("query_together(): a session's tasks on one frame go to query_batch(), not twice here");
      }
    }
  }
  // Sessions of different adapters never share a pass: each adapter's tasks
  // are answered together, one adapter after another.
  std::vector<std::vector<size_t>> by_adapter;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const LoraAdapter* adapter = tasks[i].session->impl_->params.adapter->get();
    auto same = std::find_if(by_adapter.begin(), by_adapter.end(), [&](const std::vector<size_t>& group) {
      return tasks[group.front()].session->impl_->params.adapter->get() == adapter;
    });
    if (same == by_adapter.end()) {
      by_adapter.push_back({i});
    } else {
      same->push_back(i);
    }
  }
  if (by_adapter.size() > 1) {
    results.assign(tasks.size(), Result<Answer>(Error{ErrorCode::kBackend, "not answered"}));
    for (const std::vector<size_t>& group : by_adapter) {
      std::vector<SessionTask> part;
      for (size_t i : group) part.push_back(tasks[i]);
      std::vector<Result<Answer>> answers = query_together(part);
      for (size_t k = 0; k < group.size(); ++k) results[group[k]] = std::move(answers[k]);
    }
    return results;
  }
  Impl& first = *tasks.front().session->impl_;
  AdapterInUse adapter(first.engine, first.params);
  // Each session's frame, one after another (a task that cannot start fails
  // alone), then every final block in one pass (Model::forward_sequences).
  std::vector<std::unique_ptr<RunningQuery>> runs(tasks.size());
  results.reserve(tasks.size());
  auto fail = [&](size_t i, Error error) {
    results[i] = std::move(error);
    if (tasks[i].on_answer) tasks[i].on_answer(results[i]);
  };
  std::vector<SequenceStep> finals;
  std::vector<size_t> started;  // finals[k] is task started[k]'s
  for (size_t i = 0; i < tasks.size(); ++i) {
    Impl& impl = *tasks[i].session->impl_;
    results.emplace_back(Answer{});
    auto run = impl.start(tasks[i].task);
    if (!run) {
      fail(i, run.error());
      continue;
    }
    runs[i] = std::move(run).value();
    const std::vector<TokenId>& final_block = runs[i]->task.final_block;
    finals.push_back({std::vector<int64_t>(final_block.begin(), final_block.end()), &impl.context->cache()});
    started.push_back(i);
  }
  const Model& model = tasks[0].session->impl_->engine.model();
  Stopwatch watch(model.device());
  auto first_logits = finals.empty() ? Result<at::Tensor>(at::Tensor()) : model.forward_sequences(finals);
  const double prefill_ms = watch.lap();
  std::vector<DecodingSequence> sequences;
  std::vector<size_t> decoding;  // sequences[k] is task decoding[k]'s
  for (size_t k = 0; k < started.size(); ++k) {
    const size_t i = started[k];
    Impl& impl = *tasks[i].session->impl_;
    if (!first_logits) {
      impl.context->finish(runs[i]->task.final_block);
      fail(i, first_logits.error());
      continue;
    }
    runs[i]->answer.report.ms.query_prefill = prefill_ms;  // each waited for the whole pass
    impl.prefilled(*runs[i], (*first_logits)[static_cast<int64_t>(k)], tasks[i].task.on_chunk);
    sequences.push_back({&impl.context->cache(), runs[i]->answer.first_logits, runs[i]->decoder.get(), {}, {}});
    decoding.push_back(i);
  }
  // Every answer in lockstep: one pass a step for all; each is finished (and
  // handed to its on_answer) as soon as it is complete.
  std::vector<bool> ended(tasks.size(), false);
  auto end_task = [&](size_t k, const Status& decoded) {
    const size_t i = decoding[k];
    runs[i]->stats = sequences[k].stats;
    results[i] = tasks[i].session->impl_->end(*runs[i], decoded);
    ended[i] = true;
    if (tasks[i].on_answer) tasks[i].on_answer(results[i]);
  };
  for (size_t k = 0; k < sequences.size(); ++k) sequences[k].on_done = [&end_task, k] { end_task(k, Status()); };
  const Status decoded = sequences.empty() ? Status() : decode_together(model, sequences);
  for (size_t k = 0; k < decoding.size(); ++k) {
    if (ended[decoding[k]]) continue;
    end_task(k, decoded.ok() ? Status(Error{ErrorCode::kBackend, "decoding stopped"}) : decoded);
  }
  return results;
}

std::vector<Result<Answer>> Session::Impl::query_batch(const std::vector<Task>& tasks) {
  std::vector<Result<Answer>> results;
  if (tasks.empty()) return results;
  // One task runs on the frame's KV itself: a branch would only add a copy.
  if (tasks.size() == 1) {
    for (const Task& t : tasks) results.push_back(query(t));
    return results;
  }
  auto fail_all = [&](const Error& error) {
    std::vector<Result<Answer>> failed;
    for (size_t i = 0; i < tasks.size(); ++i) failed.emplace_back(error);
    return failed;
  };
  if (stream.frames() == 0) {
    return fail_all({ErrorCode::kInvalidArgument, "query() before the first frame: send the game state with update()"});
  }
  const Model& model = engine.model();
  Stopwatch watch(model.device());
  const Clock::time_point start = Clock::now();
  QueryReport shared;
  const FramePrompt prompt = frame_prompt(shared);

  // Each task on its own: a bad one fails alone.
  std::vector<std::optional<ReadyTask>> ready_tasks;
  std::vector<size_t> runnable;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto r = ready(tasks[i], shared.context_tokens);
    results.emplace_back(r ? Result<Answer>(Answer{}) : Result<Answer>(r.error()));
    if (r) runnable.push_back(i);
    ready_tasks.emplace_back(r ? std::optional<ReadyTask>(std::move(r).value()) : std::nullopt);
  }
  if (runnable.empty()) return results;
  shared.ms.tokenize = watch.lap();

  // The work they share: the frame's KV, once.
  if (Status prepared = context->prepare(prompt, shared); !prepared.ok()) {
    context->finish({});
    return fail_all(prepared.error());
  }
  count_ahead(shared);
  watch.restart();

  // Their final blocks, each on a branch of that KV, in one batch.
  std::vector<std::vector<int32_t>> finals;
  int64_t capacity = 1;
  for (size_t i : runnable) {
    const ReadyTask& r = *ready_tasks[i];
    finals.push_back(r.final_block);
    capacity = std::max(capacity, static_cast<int64_t>(r.final_block.size()) + r.generate.max_tokens);
  }
  const KvCache& frame_kv = context->cache();
  auto branches = model.new_branches(frame_kv, static_cast<int64_t>(runnable.size()), capacity);
  if (!branches) {
    context->finish({});
    return fail_all(branches.error());
  }
  auto logits = model.forward_branches(finals, frame_kv, *branches);
  if (!logits) {
    context->finish({});
    return fail_all(logits.error());
  }
  shared.ms.query_prefill = watch.lap();
  const Clock::time_point prefill_done = Clock::now();
  const at::Tensor first_logits = logits->to(at::kCPU);

  std::vector<ChunkTimer> timers(runnable.size(), ChunkTimer{start});
  std::vector<Decoder> decoders;
  for (size_t k = 0; k < runnable.size(); ++k) {
    const size_t i = runnable[k];
    decoders.emplace_back(engine.tokenizer(), ready_tasks[i]->generate, timers[k].wrap(tasks[i].on_chunk));
  }
  GenerateStats stats;
  const Status decoded = decode_branches(model, frame_kv, *branches, first_logits, decoders, stats);
  context->finish({});
  if (!decoded.ok()) return fail_all(decoded.error());
  pending_partition_ms = 0;

  const int64_t shared_tokens = shared.tokens_encoded;
  for (size_t k = 0; k < runnable.size(); ++k) {
    const size_t i = runnable[k];
    Answer& answer = *results[i];
    answer.report = shared;
    answer.report.query_tokens = static_cast<int64_t>(ready_tasks[i]->final_block.size());
    answer.report.tokens_encoded = shared_tokens + answer.report.query_tokens;
    answer.first_logits = first_logits[static_cast<int64_t>(k)];
    finish_answer(answer, decoders[k].finish(), decoders[k], prefill_done, timers[k]);
  }
  return results;
}

}  // namespace kvframe::runtime
