// Choosing the next token from logits: greedy, or temperature / top-k / top-p
// sampling from a seeded generator, so a run can be replayed exactly.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <random>

#include "kvframe/runtime_output/json_schema.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::runtime {

struct SamplingParams {
  float temperature = 0.0f;  // <= 0: greedy (argmax)
  int32_t top_k = 0;         // keep the k most likely tokens; 0: all
  float top_p = 1.0f;        // keep the smallest set whose probability reaches p; 1: all
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // logits: [n_vocab] or [1, n_vocab], any device and float dtype. With
  // `allowed`, only its tokens are candidates (an output schema's mask): the
  // others are as if their logit were -inf. It must not be empty.
  TokenId sample(const at::Tensor& logits, const TokenMask* allowed = nullptr);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace kvframe::runtime
