// Text generation: prefill the prompt, then decode token by token until an
// end token, a stop string, the end of a schema's JSON, the token limit or
// the end of the context.
//
// Decoder is one sequence's decoding, a token at a time: it picks each token
// (sampling, within an output schema), turns tokens into streamed text
// chunks (stop strings, sentence ends, never half a UTF-8 character) and
// decides when to stop. generate(), Session::query and the batched NPC
// queries (Session::query_batch, one Decoder per NPC) all run it, so a
// batched answer is decided exactly as a lone one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_output/json_schema.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime/sampling.h"
#include "kvframe/runtime_output/text_output.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::runtime {

// Prompt tokens per forward pass when a caller leaves it to kvframe: 512 on
// the CPU, where a chunk's score matrix is what fits the caches; on CUDA the
// whole prompt in one pass up to 32K tokens, so an empty cache prefills with
// fused (flash) attention and reads the weights once.
inline constexpr int64_t kPrefillChunkAuto = 0;

struct GenerateParams {
  int32_t max_tokens = 128;
  SamplingParams sampling;
  // Generation stops after any of these (not included in the text). Typically
  // the tokenizer's eos and the chat template's end-of-turn token: see
  // default_stop_tokens().
  std::vector<TokenId> stop_tokens;
  // The text ends before the first of these (it is not included, nor streamed).
  std::vector<std::string> stop_strings;
  // When set, the output is JSON valid against it (json_schema.h): every
  // token is picked from the schema's mask, and decoding stops once the
  // value is complete (StopReason::kComplete). The schema's vocabulary must
  // be this tokenizer's, with these stop tokens as its end tokens.
  std::shared_ptr<CompiledSchema> schema;
  bool split_sentences = true;  // streamed chunks end at sentence ends (TextChunk::sentence_end)
  int64_t prefill_chunk = 0;    // prompt tokens per forward pass (bounds memory); 0: kPrefillChunkAuto
  int64_t context = 0;          // KV cache size; 0: prompt + max_tokens
  // Called between two decoding steps (a token picked, not yet run through
  // the model): a server runs other sessions' work there, so one long
  // answer does not hold every other game behind it. It must leave this
  // sequence's cache alone. Its time is not counted as decoding
  // (GenerateStats::decode_seconds); the answer's wall times include it.
  std::function<void()> between_steps;
};

enum class StopReason { kStopToken, kMaxTokens, kContextFull, kStopString, kComplete };
const char* stop_reason_name(StopReason reason);

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;    // forward passes after the prefill, one per sampled token
  int64_t forced_tokens = 0;   // tokens the output schema forced, run in those passes without a step of their own
  double prefill_seconds = 0;  // until the first token's logits (time to first token)
  double decode_seconds = 0;   // the rest
  double mask_seconds = 0;     // picking tokens within the output schema (included in the above)
  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;  // tokens appended (sampled + forced) per second
};

// A point where the output schema left the model a real choice (more than
// one token allowed): what a game needs to see how sure the model was of its
// action (kvframe-holdem measures block mode's action distribution against
// full mode's with it). The likeliest allowed tokens, with the model's
// probabilities renormalized over the allowed ones (temperature 1, whatever
// the sampler's).
struct ChoiceOption {
  std::string text;  // the token's bytes
  double probability = 0;
};
struct ChoicePoint {
  std::string prefix;  // the answer's bytes before this token
  std::vector<ChoiceOption> options;  // most likely first, at most kChoiceOptions
};
// Bounds on what a schema'd answer records: its first choice points (a game
// action's choices come first: action, then amount), each's likeliest tokens.
inline constexpr size_t kChoicePoints = 4;
inline constexpr size_t kChoiceOptions = 8;

struct Generation {
  std::vector<TokenId> tokens;  // generated, without the stop token
  std::vector<ChoicePoint> choices;  // with an output schema: its first kChoicePoints choices
  std::string text;             // cut before a stop string
  StopReason stop = StopReason::kMaxTokens;
  GenerateStats stats;
};

// Receives the text as it becomes final, in order (see TextOutput).
using ChunkCallback = std::function<void(const TextChunk&)>;

// The tokenizer's eos plus, when the vocabulary has it, the end-of-turn token
// of the chat template ("<|im_end|>", "<|eot_id|>").
std::vector<TokenId> default_stop_tokens(const Tokenizer& tokenizer, const std::string& end_of_turn);

// The constraint's view of a tokenizer: every token's bytes, which are
// special, and `end_tokens` (default_stop_tokens) as the tokens that end
// the JSON. Built once per tokenizer (an Engine keeps one).
std::shared_ptr<const TokenVocabulary> token_vocabulary(const Tokenizer& tokenizer, std::vector<TokenId> end_tokens);

class Decoder {
 public:
  // params.max_tokens >= 1 (kInvalidArgument otherwise, from check()).
  Decoder(const Tokenizer& tokenizer, const GenerateParams& params, ChunkCallback on_chunk = {});
  ~Decoder();
  Decoder(Decoder&&) noexcept;

  // kInvalidArgument for max_tokens < 1; kUnsatisfiable when the schema's
  // shortest output takes more than max_tokens tokens.
  static Status check(const GenerateParams& params);

  // The next token from the last token's logits ([n_vocab] or [1, n_vocab],
  // any device and float dtype).
  TokenId pick(const at::Tensor& logits);
  // Takes the token pick() chose. True while decoding goes on: run the token
  // through the model and pick() again.
  bool take(TokenId token);
  // The token the output schema allows next when it allows only one (nullopt:
  // no schema, a real choice, or done). pick() would choose it whatever the
  // logits, so decode() takes such runs without a step each (jump-forward).
  std::optional<TokenId> forced();
  // Runs GenerateParams::between_steps, if set; the seconds it took.
  double pause();
  // Ends decoding early (the cache is full).
  void stop(StopReason reason);
  bool done() const;
  // When the first token was taken (time to first token), and when decoding ended.
  std::optional<std::chrono::steady_clock::time_point> first_token_at() const;
  std::optional<std::chrono::steady_clock::time_point> done_at() const;
  // After done(): flushes the held-back text and returns the result (stats:
  // generated_tokens and mask_seconds; the caller times the rest).
  Generation finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs `tokens` through the model into `cache`, `chunk` tokens per forward
// pass (bounds activation memory on long prompts; 0: kPrefillChunkAuto);
// returns the last token's fp32 logits [1, n_vocab].
Result<at::Tensor> prefill(const Model& model, const std::vector<TokenId>& tokens, KvCache& cache,
                           int64_t chunk = kPrefillChunkAuto);

Result<Generation> generate(const Model& model, const Tokenizer& tokenizer,
                            const std::vector<TokenId>& prompt, const GenerateParams& params,
                            const ChunkCallback& on_chunk = {});

// The decoding half of generate(), for callers that prefill the cache their
// own way (the block-attention session): from the prompt's last `logits`,
// picks a token, runs it through the model, and so on until the decoder is
// done or the cache is full. Counts decode_steps and decode_seconds into
// `stats`.
Status decode(const Model& model, KvCache& cache, at::Tensor logits, Decoder& decoder, GenerateStats& stats);

// decode() for many sequences at once, each on its branch of `shared`
// (Model::forward_branches): `logits` [branches, n_vocab] are each branch's
// last logits, decoders[b] decodes branch b. Every step picks one token per
// unfinished branch and runs them all through the model in one batch.
// decode_steps counts batched steps.
Status decode_branches(const Model& model, const KvCache& shared, BranchCache& branches, const at::Tensor& logits,
                       std::vector<Decoder>& decoders, GenerateStats& stats);

// One of decode_together()'s sequences: its own cache (after its prompt),
// the prompt's last fp32 logits, and its decoder. stats counts its steps.
struct DecodingSequence {
  KvCache* cache = nullptr;
  at::Tensor logits;
  Decoder* decoder = nullptr;
  GenerateStats stats;
  // Called once, as soon as this sequence's answer is complete (the others
  // may go on): a server sends that answer then, not when the last is done.
  std::function<void()> on_done;
};

// decode() for independent sequences — answers of different sessions — in
// lockstep: every step runs each unfinished sequence's next token (with the
// tokens its schema forces after it) through Model::forward_sequences, one
// pass for all. Each sequence gets what decode() would give it alone (greedy:
// the same tokens; logits to fp32 rounding). decode_seconds is each
// sequence's time until its answer was complete. On an error the sequences
// not yet done are left unfinished (their on_done is not called).
Status decode_together(const Model& model, std::vector<DecodingSequence>& sequences);

}  // namespace kvframe::runtime
