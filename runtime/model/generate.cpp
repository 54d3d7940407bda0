#include "kvframe/runtime/generate.h"
#include "seconds_since.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <chrono>

namespace kvframe::runtime {

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kStopToken: return "stop_token";
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kContextFull: return "context_full";
    case StopReason::kStopString: return "stop_string";
    case StopReason::kComplete: return "complete";
  }
  return "unknown";
}

double GenerateStats::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0;
}
double GenerateStats::decode_tokens_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(decode_steps + forced_tokens) / decode_seconds : 0;
}

std::vector<TokenId> default_stop_tokens(const Tokenizer& tokenizer, const std::string& end_of_turn) {
  std::vector<TokenId> stops;
  if (auto eos = tokenizer.eos_id()) stops.push_back(*eos);
  if (auto eot = tokenizer.find_token(end_of_turn); eot && std::find(stops.begin(), stops.end(), *eot) == stops.end()) {
    stops.push_back(*eot);
  }
  return stops;
}

Result<at::Tensor> prefill(const Model& model, const std::vector<TokenId>& tokens, KvCache& cache, int64_t chunk) {
  if (tokens.empty()) return Error{ErrorCode::kInvalidArgument, "prefill() needs at least one token"};
  if (chunk < 0) return Error{ErrorCode::kInvalidArgument, "the prefill chunk must be at least 1 token (0: auto)"};
  if (chunk == kPrefillChunkAuto) chunk = model.device().is_cuda() ? 32768 : 512;
  const auto n = static_cast<int64_t>(tokens.size());
  at::Tensor all = at::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), at::kLong);
  at::Tensor logits;
  for (int64_t i = 0; i < n; i += chunk) {
    auto part = model.forward(all.narrow(0, i, std::min(chunk, n - i)), cache);
    if (!part) return part.error();
    logits = std::move(part).value();
  }
  return logits;
}

Result<Generation> generate(const Model& model, const Tokenizer& tokenizer,
                            const std::vector<TokenId>& prompt, const GenerateParams& params,
                            const ChunkCallback& on_chunk) {
  if (prompt.empty()) return Error{ErrorCode::kInvalidArgument, "the prompt has no tokens"};
  if (params.prefill_chunk < 0) return Error{ErrorCode::kInvalidArgument, "prefill_chunk must be at least 1 (0: auto)"};
  if (auto checked = Decoder::check(params); !checked.ok()) return checked.error();
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  const int64_t context = params.context > 0 ? params.context : n_prompt + params.max_tokens;
  if (n_prompt >= context) {
    return Error{ErrorCode::kContextFull, "the prompt has " + std::to_string(n_prompt) +
                                              " tokens but the context holds " + std::to_string(context)};
  }

  auto allocated = model.new_cache(context);
  if (!allocated) return allocated.error();
  KvCache& cache = *allocated;
  const auto start = std::chrono::steady_clock::now();
  auto logits = prefill(model, prompt, cache, params.prefill_chunk);
  if (!logits) return logits.error();
  const double prefill_seconds = seconds_since(start);
  Decoder decoder(tokenizer, params, on_chunk);
  GenerateStats stats;
  if (auto status = decode(model, cache, *logits, decoder, stats); !status.ok()) return status.error();
  Generation out = decoder.finish();
  out.stats.prompt_tokens = n_prompt;
  out.stats.prefill_seconds = prefill_seconds;
  out.stats.decode_steps = stats.decode_steps;
  out.stats.forced_tokens = stats.forced_tokens;
  out.stats.decode_seconds = stats.decode_seconds;
  return out;
}

namespace {

// A run of forced tokens goes through the model in one pass; 16 is the most
// the CPU step path takes (runtime/model/cpu_step.h).
constexpr size_t kLongestRun = 16;

// The tokens of a sequence's next pass: the token picked from `logits` and
// the run its schema forces after it, which needs no logits of its own, only
// keys and values (jump-forward). Empty once the decoder is done, or the
// cache full.
std::vector<int64_t> next_run(Decoder& decoder, const at::Tensor& logits, const KvCache& cache) {
  const TokenId token = decoder.pick(logits);
  if (!decoder.take(token)) return {};
  if (cache.length >= cache.capacity) {
    decoder.stop(StopReason::kContextFull);
    return {};
  }
  std::vector<int64_t> run{token};
  while (run.size() < kLongestRun && cache.length + static_cast<int64_t>(run.size()) < cache.capacity) {
    const std::optional<TokenId> next = decoder.forced();
    if (!next) break;
    if (!decoder.take(*next)) return {};  // the forced token ended the answer: nothing left to run
    run.push_back(*next);
  }
  return run;
}

void count_step(GenerateStats& stats, const std::vector<int64_t>& run) {
  ++stats.decode_steps;
  stats.forced_tokens += static_cast<int64_t>(run.size()) - 1;
}

}  // namespace

Status decode(const Model& model, KvCache& cache, at::Tensor logits, Decoder& decoder, GenerateStats& stats) {
  const auto start = std::chrono::steady_clock::now();
  double paused = 0;
  while (true) {
    const std::vector<int64_t> run = next_run(decoder, logits, cache);
    if (run.empty()) break;
    paused += decoder.pause();
    auto step = model.forward(at::tensor(run, at::kLong), cache);
    if (!step) return step.error();
    count_step(stats, run);
    logits = std::move(step).value();
  }
  stats.decode_seconds += seconds_since(start) - paused;
  return {};
}

Status decode_together(const Model& model, std::vector<DecodingSequence>& sequences) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<at::Tensor> logits;
  for (DecodingSequence& sequence : sequences) logits.push_back(sequence.logits.to(at::kCPU, at::kFloat));
  std::vector<bool> finished(sequences.size(), false);
  std::vector<SequenceStep> steps;
  std::vector<size_t> stepping;  // steps[k] is sequence stepping[k]'s
  double paused = 0;
  while (true) {
    steps.clear();
    stepping.clear();
    for (size_t i = 0; i < sequences.size(); ++i) {
      DecodingSequence& sequence = sequences[i];
      if (finished[i]) continue;
      std::vector<int64_t> run =
          sequence.decoder->done() ? std::vector<int64_t>{} : next_run(*sequence.decoder, logits[i], *sequence.cache);
      if (run.empty()) {  // its answer is complete
        finished[i] = true;
        sequence.stats.decode_seconds += seconds_since(start) - paused;
        if (sequence.on_done) sequence.on_done();
        continue;
      }
      steps.push_back({std::move(run), sequence.cache});
      stepping.push_back(i);
    }
    if (steps.empty()) break;
    paused += sequences[stepping[0]].decoder->pause();
    auto step = model.forward_sequences(steps);
    if (!step) return step.error();
    const at::Tensor rows = step->to(at::kCPU);
    for (size_t k = 0; k < steps.size(); ++k) {
      logits[stepping[k]] = rows[static_cast<int64_t>(k)];
      count_step(sequences[stepping[k]].stats, steps[k].tokens);
    }
  }
  return {};
}

Status decode_branches(const Model& model, const KvCache& shared, BranchCache& branches, const at::Tensor& logits,
                       std::vector<Decoder>& decoders, GenerateStats& stats) {
  const auto start = std::chrono::steady_clock::now();
  at::Tensor rows = logits.to(at::kCPU, at::kFloat);
  const auto n = static_cast<int64_t>(decoders.size());
  std::vector<std::vector<int32_t>> next(decoders.size());
  double paused = 0;
  while (true) {
    bool any = false;
    for (int64_t b = 0; b < n; ++b) {
      auto& row = next[static_cast<size_t>(b)];
      row.clear();
      Decoder& decoder = decoders[static_cast<size_t>(b)];
      if (decoder.done()) continue;
      const TokenId token = decoder.pick(rows[b]);
      if (!decoder.take(token)) continue;
      if (branches.length[static_cast<size_t>(b)] >= branches.capacity) {
        decoder.stop(StopReason::kContextFull);
        continue;
      }
      row.push_back(token);
      any = true;
    }
    if (!any) break;
    paused += decoders.front().pause();
    auto step = model.forward_branches(next, shared, branches);
    if (!step) return step.error();
    ++stats.decode_steps;
    rows = step->to(at::kCPU);
  }
  stats.decode_seconds += seconds_since(start) - paused;
  return {};
}

}  // namespace kvframe::runtime
