// Tiny random-weight models loaded into the runtime, and random token rows:
// what the model, training and LoRA tests share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"
#include "tiny_model.h"

namespace kvframe::test {

// fp32 unless params.dtype says otherwise (the library's default follows the CPU).
std::unique_ptr<runtime::Model> load_tiny_model(const TinyModelSpec& spec, runtime::ModelParams params = {});

// The shapes block attention meets: GQA (the default), Qwen2 biases and an
// untied head, Qwen3's QK norms, plain multi-head.
std::vector<TinyModelSpec> tiny_shapes();
// Gemma 3's shape at a window of 5 (layer 0 local, layer 1 global): what
// block attention's windowed paths meet (the encoder, branches, training).
TinyModelSpec windowed_shape();
std::string describe(const TinyModelSpec& spec);

// A token row as Model::forward takes it (int64).
at::Tensor token_ids(const std::vector<int32_t>& tokens);

std::vector<int32_t> random_tokens(int64_t n, uint32_t seed);

// The largest |logit - reference[position]| over a prompt run once as a
// prefill and once a token a step (decoding steps: the CPU's step kernels).
double largest_gap_to(const runtime::Model& model, const std::vector<int32_t>& prompt,
                      const std::vector<std::vector<double>>& reference);

// A file path of its own under the tests' temporary folder, removed with it.
struct TempFile {
  TempFile();
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path;
};
std::vector<std::vector<int32_t>> random_rows(const std::vector<int64_t>& lengths, uint32_t seed);

}  // namespace kvframe::test
