// The libtorch backend of the forward pass (torch_kernels.h), and
// Model::Impl::run, which runs the layer loop on it.
#include "torch_kernels.h"

#include <ATen/core/grad_mode.h>

#include "cpu_step.h"

namespace kvframe::runtime {
namespace {

const at::Tensor kNoBias;

}  // namespace

Model::Impl::TorchKernels::TorchKernels(const Impl& model, const at::Tensor& ids, const Rope::Table& rope_table,
                                        AttentionPlan& plan, bool adapted)
    : model_(model), ids_(ids), table_(rope_table), plan_(plan) {
  if (adapted && model.adapter) {
    const LoraAdapter::Impl& a = LoraAccess::of(*model.adapter);
    const bool grad = at::GradMode::is_enabled() && !a.parameters.empty() && a.parameters.front().requires_grad();
    if (grad) trained_ = a.fuse(model.dtype);
    lora_ = grad ? &trained_ : &a.fused(model.dtype);
  }
}

Model::Impl::TorchKernels::Parts Model::Impl::TorchKernels::parts(int64_t layer, Projection projection) const {
  const auto l = static_cast<size_t>(layer);
  const LayerWeights& w = model_.weights.layers[l];
  const StepWeights::Layer* stored = model_.step && !w.wqkv.defined() ? &model_.step->layers[l] : nullptr;
  const LayerLora* pairs = lora_ ? &(*lora_)[l] : nullptr;
  auto of = [&](const at::Tensor& weight, const QuantMatrix StepWeights::Layer::*matrix, const at::Tensor& bias,
                FusedLora LayerLora::*pair) {
    return Parts{weight, stored ? &(stored->*matrix) : nullptr, bias, pairs ? &(pairs->*pair) : nullptr, pair};
  };
  switch (projection) {
    case Projection::kQkv: return of(w.wqkv, &StepWeights::Layer::wqkv, w.bqkv, &LayerLora::qkv);
    case Projection::kOutput: return of(w.wo, &StepWeights::Layer::wo, kNoBias, &LayerLora::o);
    case Projection::kGateUp: return of(w.w_gate_up, &StepWeights::Layer::w_gate_up, kNoBias, &LayerLora::gate_up);
    case Projection::kDown: break;
  }
  return of(w.w_down, &StepWeights::Layer::w_down, kNoBias, &LayerLora::down);
}

at::Tensor Model::Impl::TorchKernels::embed() const {
  at::Tensor x;
  if (model_.weights.embed.defined()) {
    x = model_.weights.embed.index_select(0, ids_);
  } else {  // the rows of the stored matrix, dequantized
    const QuantMatrix& table = model_.step->embed();
    const at::Tensor ids = ids_.to(at::kCPU, at::kLong).contiguous();
    x = at::empty({ids.numel(), table.cols()}, at::kFloat);
    for (int64_t i = 0; i < ids.numel(); ++i) table.dequantize_row(ids.data_ptr<int64_t>()[i], x.data_ptr<float>() + i * table.cols());
    x = x.to(model_.dtype);
  }
  return model_.config.embed_scale == 1.0 ? x : x * model_.config.embed_scale;
}

at::Tensor Model::Impl::TorchKernels::rms_norm(const at::Tensor& x, int64_t layer, Norm norm) const {
  return model_.rms_norm(x, model_.weights.layers[static_cast<size_t>(layer)].norm(norm));
}

at::Tensor Model::Impl::TorchKernels::qk_norm(const at::Tensor& qkv, int64_t layer) const {
  const ModelConfig& c = model_.config;
  const LayerWeights& w = model_.weights.layers[static_cast<size_t>(layer)];
  const int64_t T = qkv.size(0), H = c.n_head, KH = c.n_head_kv, d = c.head_dim;
  const at::Tensor q = model_.rms_norm(qkv.narrow(1, 0, H * d).view({T, H, d}), w.q_norm);
  const at::Tensor k = model_.rms_norm(qkv.narrow(1, H * d, KH * d).view({T, KH, d}), w.k_norm);
  return at::cat({q.view({T, H * d}), k.view({T, KH * d}), qkv.narrow(1, (H + KH) * d, KH * d)}, 1);
}

// x W^T (+ bias) (+ the adapter's low-rank update of this projection). A
// stored matrix is multiplied as stored (QuantMatrix::linear, which also
// serves training); adapters merged at load are added on the fly, since its
// blocks cannot take them.
at::Tensor Model::Impl::TorchKernels::apply(const Parts& p, const at::Tensor& x, int64_t layer) const {
  at::Tensor y;
  if (p.weight.defined()) {
    y = at::linear(x, p.weight, p.bias);
  } else {
    y = p.stored->linear(x);
    if (p.bias.defined()) y = y + p.bias;
    for (const std::vector<LayerLora>& merged : model_.merged_step_lora) {
      const FusedLora& pair = merged[static_cast<size_t>(layer)].*p.pair;
      if (pair.a.defined()) y = y + pair.apply(x.to(at::kFloat)).to(y.scalar_type());
    }
  }
  if (p.lora && p.lora->a.defined()) y = y + p.lora->apply(x);
  return y;
}

at::Tensor Model::Impl::TorchKernels::project(const at::Tensor& x, int64_t layer, Projection projection) const {
  return apply(parts(layer, projection), x, layer);
}

Model::Impl::TorchKernels::Rotated Model::Impl::TorchKernels::rope(const at::Tensor& qkv, int64_t layer) const {
  const ModelConfig& c = model_.config;
  const int64_t heads = c.n_head + c.n_head_kv;
  // Queries and keys are adjacent heads: one rotation for both.
  at::Tensor qk = qkv.narrow(1, 0, heads * c.head_dim).view({qkv.size(0), heads, c.head_dim});
  if (model_.query_scale.defined()) {  // LongRoPE's attention factor (rope.h)
    qk = at::cat({qk.narrow(1, 0, c.n_head) * model_.query_scale, qk.narrow(1, c.n_head, c.n_head_kv)}, 1);
  }
  return {qkv, Rope::apply(qk, table_.of(c.is_local(layer)))};
}

at::Tensor Model::Impl::TorchKernels::attend(int64_t layer, const Rotated& rotated) {
  const ModelConfig& c = model_.config;
  const int64_t T = rotated.qkv.size(0), H = c.n_head, KH = c.n_head_kv, d = c.head_dim;
  const at::Tensor k_raw = rotated.qkv.narrow(1, H * d, KH * d).view({T, KH, d});
  const at::Tensor v = rotated.qkv.narrow(1, (H + KH) * d, KH * d).view({T, KH, d});
  return plan_.attend(layer, rotated.qk.narrow(1, 0, H), rotated.qk.narrow(1, H, KH), k_raw, v);
}

at::Tensor Model::Impl::TorchKernels::keep_rows(const at::Tensor& x, int64_t layer) {
  const at::Tensor kept = plan_.rows_after(layer);
  if (!kept.defined()) return x;
  table_ = table_.rows(kept);
  return x.index_select(0, kept);
}

// residual + x W^T (+ the adapter's update): on CUDA, where each kernel
// launch counts, one matmul that adds the residual as it writes (no bias, no
// adapter pair, no gradients); elsewhere the projection, then the sum.
at::Tensor Model::Impl::TorchKernels::add_projection(const at::Tensor& residual, const at::Tensor& x,
                                                     int64_t layer, Projection projection) const {
  const Parts p = parts(layer, projection);
  if (residual.is_cuda() && !p.bias.defined() && !(p.lora && p.lora->a.defined()) && !at::GradMode::is_enabled()) {
    return at::addmm(residual, x, p.weight.t());
  }
  return residual + apply(p, x, layer);
}

at::Tensor Model::Impl::TorchKernels::add_normed(const at::Tensor& residual, const at::Tensor& x, int64_t layer,
                                                  Norm norm) const {
  return residual + rms_norm(x, layer, norm);
}

at::Tensor Model::Impl::TorchKernels::gated(const at::Tensor& gate_up) const {
  const int64_t F = model_.config.n_ff;
  const at::Tensor gate = gate_up.narrow(1, 0, F);
  const at::Tensor act = model_.config.gate == ModelConfig::Gate::kGeluTanh ? at::gelu(gate, "tanh") : at::silu(gate);
  return act * gate_up.narrow(1, F, F);
}

at::Tensor Model::Impl::run(const at::Tensor& ids, const Rope::Table& rope_table, AttentionPlan& plan,
                            bool adapted) const {
  use_threads();
  TorchKernels kernels(*this, ids, rope_table, plan, adapted);
  return forward_layers(kernels, config);
}

at::Tensor Model::Impl::head(const at::Tensor& hidden) const {
  const at::Tensor normed = rms_norm(hidden, weights.output_norm);
  if (!weights.output.defined()) return step->output.linear(normed).to(at::kFloat);
  return at::linear(normed, weights.output).to(at::kFloat);
}

at::Tensor id_tensor(const std::vector<int64_t>& ids, at::Device device) {
  return at::tensor(ids, at::kLong).to(device);
}

}  // namespace kvframe::runtime
