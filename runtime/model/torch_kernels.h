// The forward pass's libtorch backend (forward_pass.h): each step of the
// layer loop as libtorch ops, on any device and dtype, for packed batches of
// any length, differentiable for training. Attention is the plan's.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "forward_pass.h"
#include "model_impl.h"
#include "quant_matrix.h"

namespace kvframe::runtime {

class Model::Impl::TorchKernels {
 public:
  using Rows = at::Tensor;
  // Q|K|V as projected, and its Q and K heads rotated together.
  struct Rotated {
    at::Tensor qkv, qk;
  };

  // Tokens ids [T] at rope_table's positions, attention as `plan` says, the
  // model's adapter applied when `adapted`.
  TorchKernels(const Impl& model, const at::Tensor& ids, const Rope::Table& rope_table,
               AttentionPlan& plan, bool adapted);

  at::Tensor embed() const;
  at::Tensor rms_norm(const at::Tensor& x, int64_t layer, Norm norm) const;
  at::Tensor project(const at::Tensor& x, int64_t layer, Projection projection) const;
  at::Tensor qk_norm(const at::Tensor& qkv, int64_t layer) const;
  Rotated rope(const at::Tensor& qkv, int64_t layer) const;
  at::Tensor attend(int64_t layer, const Rotated& rotated);
  static bool ended(const at::Tensor& attended) { return !attended.defined(); }
  at::Tensor keep_rows(const at::Tensor& x, int64_t layer);
  at::Tensor add_projection(const at::Tensor& residual, const at::Tensor& x, int64_t layer,
                            Projection projection) const;
  at::Tensor add_normed(const at::Tensor& residual, const at::Tensor& x, int64_t layer, Norm norm) const;
  at::Tensor gated(const at::Tensor& gate_up) const;

 private:
  // A projection's weight (undefined where the CPU reads it as stored:
  // then `stored`), bias (may be undefined) and adapter pair (may be null).
  struct Parts {
    const at::Tensor& weight;
    const QuantMatrix* stored;
    const at::Tensor& bias;
    const FusedLora* lora;
    FusedLora LayerLora::*pair;  // which of a layer's pairs: merged adapters' too
  };
  Parts parts(int64_t layer, Projection projection) const;
  at::Tensor apply(const Parts& p, const at::Tensor& x, int64_t layer) const;

  const Impl& model_;
  at::Tensor ids_;
  Rope::Table table_;
  AttentionPlan& plan_;
  // The adapter's pairs: differentiable from its masters while training
  // (held in trained_), else cached in the compute dtype; null: none.
  std::vector<LayerLora> trained_;
  const std::vector<LayerLora>* lora_ = nullptr;
};

}  // namespace kvframe::runtime
