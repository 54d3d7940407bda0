// The CPU's weights (quant_matrix.h): the GGUF file's own blocks, read in
// place by every pass on the CPU — the step backend (step_kernels.h) and the
// libtorch one (torch_kernels.h), whose dense matrices are then dropped.
// Biases and norms come from libtorch's weights.
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
  // What the matrices multiply activations as (ModelParams::int8_activations).
  QuantMatrix::Activations activations = QuantMatrix::Activations::kInt8;
  const QuantMatrix& embed() const { return untied_embed ? *untied_embed : output; }
};

// The file's matrices, read in place (they hold file.bytes_owner()). Null
// when the shape or a matrix does not suit the kernels (a row length that is
// not a multiple of 32, a missing tensor): the model then keeps dense
// libtorch weights. Biases come from libtorch's weights (set_step_biases),
// norms are read from them.
std::optional<StepWeights> load_step_weights(const GgufFile& file, const ModelConfig& config);
void set_step_biases(StepWeights& step, const Weights& weights);
// Weights made in memory (Model::with_random_weights), copied as they are
// (F32 or BF16 rows). Null as for load_step_weights.
std::optional<StepWeights> step_weights_of(const Weights& weights, const ModelConfig& config);

// Tokens per call the step path takes; longer runs are prefills.
inline constexpr int64_t kStepTokens = 16;

}  // namespace kvframe::runtime
