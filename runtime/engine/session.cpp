// A session: frames in (json_blocker), queries out (the mode's KvContext,
// then decoding). query() is where one frame's work happens, top to bottom.

#include "kv_context.h"
#include "kvframe/json_blocker/frame_stream.h"
#include "stopwatch.h"

namespace kvframe::runtime {

struct Session::Impl {
  Engine& engine;
  SessionParams params;
  json_blocker::FrameStream stream;
  PromptFrame frame;  // prefix tokens and the final block's closing text
  BlockTokenizer blocks;
  std::unique_ptr<KvContext> context;
  double pending_partition_ms = 0;  // frames since the last query

  json_blocker::Result<json_blocker::FrameDiff> accepted(json_blocker::Result<json_blocker::FrameDiff> diff) {
    if (diff) {
      const json_blocker::FrameTimings& t = stream.last_timings();
      pending_partition_ms += t.patch_ms + t.partition_ms + t.diff_ms;
    }
    return diff;
  }

  Result<Answer> query(const Task& task);
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::open(Engine& engine, const SessionParams& params) {
  if (auto bad = json_blocker::check_rules(params.rules)) {
    return Error{ErrorCode::kInvalidArgument, "bad block rules: " + bad->to_string()};
  }
  if (params.context < 16) return Error{ErrorCode::kInvalidArgument, "a session needs a context of at least 16 tokens"};
  auto context = params.mode == AttentionMode::kBlock ? make_block_context(engine, params)
                                                       : make_causal_context(engine.model(), params.mode, params.context);
  if (!context) return context.error();
  PromptFrame frame = make_prompt_frame(engine.tokenizer(), engine.chat_template(), params.system_prompt);
  auto impl = std::unique_ptr<Impl>(new Impl{engine, params, json_blocker::FrameStream(params.rules), std::move(frame),
                                             BlockTokenizer(), std::move(context).value()});
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

Result<Answer> Session::query(const Task& task) { return impl_->query(task); }

Result<Answer> Session::Impl::query(const Task& task) {
  if (stream.frames() == 0) {
    return Error{ErrorCode::kInvalidArgument, "query() before the first frame: send the game state with update()"};
  }
  if (task.generate.max_tokens < 1) return Error{ErrorCode::kInvalidArgument, "max_tokens must be at least 1"};
  const Tokenizer& tokenizer = engine.tokenizer();
  Stopwatch watch(engine.model().device());
  Answer answer;
  QueryReport& report = answer.report;
  report.mode = params.mode;
  report.ms.partition = pending_partition_ms;

  // Tokenize: new block texts, and the final block.
  const auto& block_tokens = blocks.update(tokenizer, stream.current());
  const std::vector<TokenId> final_block = tokenizer.encode(task.instruction + frame.final_suffix);
  if (final_block.empty()) return Error{ErrorCode::kInvalidArgument, "the task's instruction is empty"};
  report.ms.tokenize = watch.lap();
  report.blocks_total = static_cast<int64_t>(block_tokens.size());
  report.context_tokens = static_cast<int64_t>(frame.prefix.size()) + blocks.tokens();
  report.query_tokens = static_cast<int64_t>(final_block.size());
  const int64_t needed = report.context_tokens + report.query_tokens + task.generate.max_tokens;
  if (needed > params.context) {
    return Error{ErrorCode::kContextFull,
                 "this frame needs " + std::to_string(needed) + " tokens (state " +
                     std::to_string(report.context_tokens) + " + task " + std::to_string(report.query_tokens) +
                     " + max_tokens " + std::to_string(task.generate.max_tokens) + ") but the session holds " +
                     std::to_string(params.context) + " — open it with a larger context or drop paths in the rules"};
  }

  // The mode brings the KV up to date and runs the final block.
  const Prompt prompt{&frame.prefix, &block_tokens, &final_block};
  auto logits = context->prefill(prompt, report);
  if (!logits) {
    context->finish({});
    return logits.error();
  }
  watch.restart();
  GenerateParams generate = task.generate;
  if (generate.stop_tokens.empty()) {
    const auto& chat = engine.chat_template();
    generate.stop_tokens = default_stop_tokens(tokenizer, chat ? chat->end_of_turn() : std::string());
  }
  Sampler sampler(generate.sampling);
  answer.first_logits = logits->reshape({-1}).to(at::kCPU);
  const TokenId first = sampler.sample(answer.first_logits);
  const double sample_ms = watch.lap();
  report.ms.first_token = report.ms.partition + report.ms.tokenize + report.ms.encode + report.ms.reposition +
                          report.ms.query_prefill + sample_ms;

  auto generation = decode_from(engine.model(), tokenizer, context->cache(), first, sampler, generate, task.on_text);
  if (!generation) {
    context->finish({});
    return generation.error();
  }
  context->finish(generation->tokens);
  pending_partition_ms = 0;
  report.ms.decode = watch.lap();
  report.ms.total = report.ms.first_token + report.ms.decode;
  report.generated_tokens = static_cast<int64_t>(generation->tokens.size());
  answer.text = std::move(generation->text);
  answer.tokens = std::move(generation->tokens);
  answer.stop = generation->stop;
  return answer;
}

}  // namespace kvframe::runtime
