#include "kvframe/runtime/generate.h"

#include <algorithm>
#include <chrono>

namespace kvframe::runtime {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kStopToken: return "stop_token";
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kContextFull: return "context_full";
  }
  return "unknown";
}

double GenerateStats::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0;
}
double GenerateStats::decode_tokens_per_second() const {
  return decode_seconds > 0 ? static_cast<double>(decode_steps) / decode_seconds : 0;
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
  if (chunk < 1) return Error{ErrorCode::kInvalidArgument, "the prefill chunk must be at least 1 token"};
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
                            const std::function<void(std::string_view)>& on_text) {
  if (prompt.empty()) return Error{ErrorCode::kInvalidArgument, "the prompt has no tokens"};
  if (params.max_tokens < 1 || params.prefill_chunk < 1) {
    return Error{ErrorCode::kInvalidArgument, "max_tokens and prefill_chunk must be at least 1"};
  }
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  const int64_t context = params.context > 0 ? params.context : n_prompt + params.max_tokens;
  if (n_prompt >= context) {
    return Error{ErrorCode::kContextFull, "the prompt has " + std::to_string(n_prompt) +
                                              " tokens but the context holds " + std::to_string(context)};
  }

  auto allocated = model.new_cache(context);
  if (!allocated) return allocated.error();
  KvCache& cache = *allocated;
  Sampler sampler(params.sampling);
  const auto start = std::chrono::steady_clock::now();
  auto logits = prefill(model, prompt, cache, params.prefill_chunk);
  if (!logits) return logits.error();
  const TokenId first = sampler.sample(*logits);
  const double prefill_seconds = seconds_since(start);
  auto out = decode_from(model, tokenizer, cache, first, sampler, params, on_text);
  if (!out) return out.error();
  out->stats.prompt_tokens = n_prompt;
  out->stats.prefill_seconds = prefill_seconds;
  return out;
}

Result<Generation> decode_from(const Model& model, const Tokenizer& tokenizer, KvCache& cache, TokenId first,
                               Sampler& sampler, const GenerateParams& params,
                               const std::function<void(std::string_view)>& on_text) {
  const auto start = std::chrono::steady_clock::now();
  TextStream stream(tokenizer);
  Generation out;
  auto emit = [&](std::string text) {
    out.text += text;
    if (on_text && !text.empty()) on_text(text);
  };
  TokenId next = first;
  while (true) {
    if (std::find(params.stop_tokens.begin(), params.stop_tokens.end(), next) != params.stop_tokens.end()) {
      out.stop = StopReason::kStopToken;
      break;
    }
    out.tokens.push_back(next);
    emit(stream.push(next));
    if (static_cast<int32_t>(out.tokens.size()) >= params.max_tokens) {
      out.stop = StopReason::kMaxTokens;
      break;
    }
    if (cache.length >= cache.capacity) {
      out.stop = StopReason::kContextFull;
      break;
    }
    auto step = model.forward(at::tensor({static_cast<int64_t>(next)}, at::kLong), cache);
    if (!step) return step.error();
    ++out.stats.decode_steps;
    next = sampler.sample(*step);
  }
  emit(stream.finish());
  out.stats.generated_tokens = static_cast<int64_t>(out.tokens.size());
  out.stats.decode_seconds = seconds_since(start);
  return out;
}

}  // namespace kvframe::runtime
