// Text generation: prefill the prompt, then decode token by token until an
// end token, the token limit or the end of the context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/runtime/error.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime/sampling.h"
#include "kvframe/runtime/tokenizer.h"

namespace kvframe::runtime {

struct GenerateParams {
  int32_t max_tokens = 128;
  SamplingParams sampling;
  // Generation stops after any of these (not included in the text). Typically
  // the tokenizer's eos and the chat template's end-of-turn token: see
  // default_stop_tokens().
  std::vector<TokenId> stop_tokens;
  int64_t prefill_chunk = 512;  // prompt tokens per forward pass (bounds memory)
  int64_t context = 0;          // KV cache size; 0: prompt + max_tokens
};

enum class StopReason { kStopToken, kMaxTokens, kContextFull };
const char* stop_reason_name(StopReason reason);

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;    // single-token forward passes after the prefill
  double prefill_seconds = 0;  // until the first token's logits (time to first token)
  double decode_seconds = 0;   // the rest
  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;
};

struct Generation {
  std::vector<TokenId> tokens;  // generated, without the stop token
  std::string text;
  StopReason stop = StopReason::kMaxTokens;
  GenerateStats stats;
};

// The tokenizer's eos plus, when the vocabulary has it, the end-of-turn token
// of the chat template ("<|im_end|>", "<|eot_id|>").
std::vector<TokenId> default_stop_tokens(const Tokenizer& tokenizer, const std::string& end_of_turn);

// Runs `tokens` through the model into `cache`, `chunk` tokens per forward
// pass (bounds activation memory on long prompts); returns the last token's
// fp32 logits [1, n_vocab].
Result<at::Tensor> prefill(const Model& model, const std::vector<TokenId>& tokens, KvCache& cache,
                           int64_t chunk = 512);

// on_text receives the text as it becomes complete (never half a UTF-8
// character); it may be empty.
Result<Generation> generate(const Model& model, const Tokenizer& tokenizer,
                            const std::vector<TokenId>& prompt, const GenerateParams& params,
                            const std::function<void(std::string_view)>& on_text = {});

// The decoding half of generate(), for callers that prefill the cache their
// own way (the block-attention session): `first` was sampled with `sampler`
// from the prompt's last logits; each kept token is run through the model
// and the next one sampled, until a stop token, params.max_tokens or a full
// cache. Fills tokens, text, stop, decode_steps and decode_seconds.
Result<Generation> decode_from(const Model& model, const Tokenizer& tokenizer, KvCache& cache, TokenId first,
                               Sampler& sampler, const GenerateParams& params,
                               const std::function<void(std::string_view)>& on_text = {});

}  // namespace kvframe::runtime
