// The CPU step backend's weights (step_kernels.h): the GGUF file's own
// 4/8-bit blocks, read by quant_matrix.h's kernels, since a step is
// memory-bound. Biases and norms come from libtorch's weights.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime/model.h"
#include "quant_matrix.h"
#include "weights.h"

namespace kvframe::runtime {

// The model's matrices as the step path reads them. Q/K rows are reordered
// to rope.h's layout as weights.cpp does; Q|K|V and gate|up are fused.
struct StepWeights {
  struct Layer {
    QuantMatrix wqkv, wo, w_gate_up, w_down;
    std::vector<float> bqkv;  // Qwen2's Q|K|V bias, or empty
  };
  QuantMatrix output;
  std::optional<QuantMatrix> untied_embed;  // token_embd when the file does not tie it to the output
  std::vector<Layer> layers;
  const QuantMatrix& embed() const { return untied_embed ? *untied_embed : output; }
};

// The file's matrices; biases and norms come from `weights` (libtorch's).
// Null when the shape or a matrix does not suit the kernels (a row length
// that is not a multiple of 32): the model then steps with libtorch.
std::optional<StepWeights> load_step_weights(const GgufFile& file, const Weights& weights, const ModelConfig& config);
// Weights made in memory (Model::with_random_weights), copied as they are
// (F32 or BF16 rows). Null as for load_step_weights.
std::optional<StepWeights> step_weights_of(const Weights& weights, const ModelConfig& config);

// Tokens per call the step path takes; longer runs are prefills.
inline constexpr int64_t kStepTokens = 16;

}  // namespace kvframe::runtime
