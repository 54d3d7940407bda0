// The forward pass's CPU step backend (forward_pass.h): a few new tokens
// appended to one or several KV caches — decoding steps, or a run of tokens
// a JSON schema forces — with quant_matrix.h's kernels and plain loops over
// fp32 rows instead of libtorch ops. A step of the default model is 30
// layers of ~40 libtorch ops whose dispatch and allocation cost more than the
// step's arithmetic, and a step is memory-bound, so this backend reads the
// GGUF file's own 4/8-bit blocks (cpu_step.h) where the libtorch backend
// reads weights dequantized to the compute dtype. Activations stay fp32 (the
// K-quant matrices take them rounded to int8: ModelParams::int8_activations);
// each cache keeps the model's dtype. tests/runtime/model/cpu_step_test.cpp holds
// the two backends to the same logits.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "cpu_step.h"
#include "forward_pass.h"
#include "model_impl.h"

namespace kvframe::runtime {

class Model::Impl::StepKernels {
 public:
  // Each kernel writes its own buffer (reused across steps of a thread) and
  // returns it; add_projection adds into x in place.
  using Rows = float*;

  // ids[first .. first + n) of segment s into its cache, at the cache's next
  // positions; the adapter applied when `adapted`.
  StepKernels(const Impl& model, const int64_t* ids, const std::vector<StepSegment>& segments,
              bool adapted);

  float* embed();
  float* rms_norm(const float* x, int64_t layer, Norm norm);
  float* project(const float* x, int64_t layer, Projection projection);
  float* qk_norm(float* qkv, int64_t layer);
  float* rope(float* qkv, int64_t layer);
  float* attend(int64_t layer, const float* qkv);
  static bool ended(const float* /*attended*/) { return false; }  // a step runs every layer
  float* keep_rows(float* x, int64_t /*layer*/) { return x; }
  float* add_projection(float* x, const float* y, int64_t layer, Projection projection);
  float* add_normed(float* x, const float* y, int64_t layer, Norm norm);
  float* gated(const float* gate_up);

  // fp32 logits [rows, n_vocab] of the last hidden states x's `rows`
  // (indices of the packed tokens).
  at::Tensor logits(const float* x, const std::vector<int64_t>& rows);

 private:
  // What the matrices take (ModelParams::int8_activations): int8 only in
  // decoding steps, one token a segment. A run of several tokens (a
  // prompt's tail, tokens a schema forces) keeps fp32, as the tiles of a
  // long pass do: a prompt's keys and values are then the same however its
  // tokens were split into passes, so reusing a cache changes nothing.
  QuantMatrix::Activations activations() const { return activations_; }
  struct Scratch;

  const Impl& model_;
  const int64_t* ids_;
  const std::vector<StepSegment>& segments_;
  int64_t n_ = 0;  // tokens, over every segment
  QuantMatrix::Activations activations_ = QuantMatrix::Activations::kFp32;
  Scratch& scratch_;
  // The adapter applied on the fly, and any merged into libtorch's weights
  // (the quantized blocks here do not hold them), in fp32.
  std::vector<const std::vector<LayerLora>*> loras_;
};

}  // namespace kvframe::runtime
