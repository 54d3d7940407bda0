// One sequence's decoding, a token at a time (Decoder in generate.h):
//
//   pick   the sampler chooses among all tokens, or among the output
//          schema's mask for this point of the JSON and the tokens left
//   take   a stop token ends it; otherwise the token's text goes through
//          TextStream (whole UTF-8 characters) and TextOutput (stop strings,
//          sentence ends) to the chunk callback, the schema advances, and
//          the schema's end, a stop string or the token limit may end it
#include <ATen/ATen.h>

#include <algorithm>

#include "kvframe/runtime/generate.h"
#include "seconds_since.h"

namespace kvframe::runtime {

struct Decoder::Impl {
  const Tokenizer& tokenizer;
  GenerateParams params;
  ChunkCallback on_chunk;
  Sampler sampler;
  TextStream stream;
  TextOutput output;
  std::optional<JsonConstraint> constraint;
  Generation out;
  // Set when decoding ends: done() is done_at.has_value().
  std::optional<std::chrono::steady_clock::time_point> first_token_at, done_at;

  Impl(const Tokenizer& vocabulary, const GenerateParams& p, ChunkCallback callback)
      : tokenizer(vocabulary),
        params(p),
        on_chunk(std::move(callback)),
        sampler(p.sampling),
        stream(vocabulary),
        output(TextOutputParams{p.stop_strings, p.split_sentences}) {
    if (params.schema) constraint.emplace(params.schema);
  }

  void emit(const std::vector<TextChunk>& chunks) {
    if (!on_chunk) return;
    for (const TextChunk& chunk : chunks) on_chunk(chunk);
  }

  int32_t tokens_left() const { return params.max_tokens - static_cast<int32_t>(out.tokens.size()); }

  // The schema's mask at this point (constraint set), timed into mask_seconds.
  const TokenMask& allowed() {
    const auto start = std::chrono::steady_clock::now();
    const TokenMask& mask = constraint->allowed(std::max(1, tokens_left()));
    out.stats.mask_seconds += seconds_since(start);
    return mask;
  }
  bool complete() const { return constraint && constraint->complete(); }

  // Records a real choice (kChoicePoints at most): the allowed tokens'
  // probabilities, the likeliest kChoiceOptions of them.
  void record_choice(const at::Tensor& logits, const TokenMask& allowed) {
    if (allowed.ids().size() < 2 || out.choices.size() >= kChoicePoints) return;
    const std::vector<int64_t> ids(allowed.ids().begin(), allowed.ids().end());
    const at::Tensor chosen =
        logits.reshape({-1}).to(at::kCPU, at::kFloat).index_select(0, at::tensor(ids, at::kLong));
    const auto top = at::softmax(chosen, 0).topk(std::min<int64_t>(kChoiceOptions, chosen.size(0)));
    const at::Tensor probability = std::get<0>(top).contiguous(), order = std::get<1>(top).contiguous();
    ChoicePoint point;
    for (TokenId id : out.tokens) point.prefix += tokenizer.token_bytes(id);
    for (int64_t k = 0; k < order.size(0); ++k) {
      const auto id = static_cast<TokenId>(ids[static_cast<size_t>(order.data_ptr<int64_t>()[k])]);
      point.options.push_back({tokenizer.token_bytes(id), static_cast<double>(probability.data_ptr<float>()[k])});
    }
    out.choices.push_back(std::move(point));
  }

  void end(StopReason reason) {
    if (done_at) return;
    out.stop = reason;
    done_at = std::chrono::steady_clock::now();
  }

  // After a kept token: a stop string, the schema's end or the token limit.
  void end_if_over() {
    if (output.stopped()) {
      end(StopReason::kStopString);
    } else if (constraint && constraint->finished()) {
      end(StopReason::kComplete);
    } else if (tokens_left() <= 0) {
      end(complete() ? StopReason::kComplete : StopReason::kMaxTokens);
    }
  }
};

Decoder::Decoder(const Tokenizer& tokenizer, const GenerateParams& params, ChunkCallback on_chunk)
    : impl_(std::make_unique<Impl>(tokenizer, params, std::move(on_chunk))) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;

Status Decoder::check(const GenerateParams& params) {
  if (params.max_tokens < 1) return Error{ErrorCode::kInvalidArgument, "max_tokens must be at least 1"};
  if (params.schema && params.schema->min_tokens() > params.max_tokens) {
    return Error{ErrorCode::kUnsatisfiable,
                 "the shortest output valid against the schema takes " + std::to_string(params.schema->min_tokens()) +
                     " tokens but max_tokens is " + std::to_string(params.max_tokens) +
                     " — raise max_tokens or shorten the schema (fewer required properties, smaller minItems)"};
  }
  return {};
}

TokenId Decoder::pick(const at::Tensor& logits) {
  Impl& d = *impl_;
  if (!d.constraint) return d.sampler.sample(logits);
  const TokenMask& allowed = d.allowed();
  // Never empty while the budget check in check() held (json_schema.h);
  // an end token is then the only honest answer.
  if (allowed.empty()) return d.params.stop_tokens.empty() ? TokenId{0} : d.params.stop_tokens.front();
  d.record_choice(logits, allowed);
  return d.sampler.sample(logits, &allowed);
}

bool Decoder::take(TokenId token) {
  Impl& d = *impl_;
  if (d.done_at) return false;
  if (!d.first_token_at) d.first_token_at = std::chrono::steady_clock::now();
  const auto& stops = d.params.stop_tokens;
  if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
    d.end(d.complete() ? StopReason::kComplete : StopReason::kStopToken);
    return false;
  }
  d.out.tokens.push_back(token);
  if (d.constraint) {
    const auto start = std::chrono::steady_clock::now();
    d.constraint->accept(token);  // pick() chose it from the mask
    d.out.stats.mask_seconds += seconds_since(start);
  }
  d.emit(d.output.push(d.stream.push(token)));
  d.end_if_over();
  return !d.done_at;
}

std::optional<TokenId> Decoder::forced() {
  Impl& d = *impl_;
  if (!d.constraint || d.done_at) return std::nullopt;
  const TokenMask& allowed = d.allowed();
  if (allowed.ids().size() != 1) return std::nullopt;
  return allowed.ids().front();
}

void Decoder::stop(StopReason reason) { impl_->end(reason); }

double Decoder::pause() {
  if (!impl_->params.between_steps) return 0;
  const auto start = std::chrono::steady_clock::now();
  impl_->params.between_steps();
  return seconds_since(start);
}

bool Decoder::done() const { return impl_->done_at.has_value(); }

std::optional<std::chrono::steady_clock::time_point> Decoder::first_token_at() const { return impl_->first_token_at; }
std::optional<std::chrono::steady_clock::time_point> Decoder::done_at() const { return impl_->done_at; }

Generation Decoder::finish() {
  Impl& d = *impl_;
  d.end(d.out.stop);  // a no-op when decoding ended already
  if (!d.output.stopped()) d.emit(d.output.push(d.stream.finish()));
  d.emit(d.output.finish());
  d.out.text = d.output.text();
  d.out.stats.generated_tokens = static_cast<int64_t>(d.out.tokens.size());
  return std::move(d.out);
}

std::shared_ptr<const TokenVocabulary> token_vocabulary(const Tokenizer& tokenizer, std::vector<TokenId> end_tokens) {
  const int32_t n = tokenizer.n_vocab();
  std::vector<std::string> bytes(static_cast<size_t>(n));
  std::vector<bool> special(static_cast<size_t>(n));
  for (TokenId id = 0; id < n; ++id) {
    bytes[static_cast<size_t>(id)] = tokenizer.token_bytes(id);
    special[static_cast<size_t>(id)] = tokenizer.is_special(id);
  }
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::move(special), std::move(end_tokens));
}

}  // namespace kvframe::runtime
