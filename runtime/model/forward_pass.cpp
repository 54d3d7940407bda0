// The model's one forward pass (see forward_pass.h), read top to bottom.
#include "forward_pass.h"

#include <ATen/core/grad_mode.h>

#include "kvframe/runtime/free_cores.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

// x W^T (+ bias) (+ the adapter's low-rank update of this projection).
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const FusedLora* lora) {
  at::Tensor y = at::linear(x, weight, bias);
  if (lora && lora->a.defined()) y = y + lora->apply(x);
  return y;
}

// residual + x W^T (+ the adapter's update): on CUDA, where each kernel
// launch counts, one matmul that adds the residual as it writes (no adapter
// pair, no gradients); elsewhere the projection, then the sum.
at::Tensor add_projection(const at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                          const FusedLora* lora) {
  if (residual.is_cuda() && !(lora && lora->a.defined()) && !at::GradMode::is_enabled()) {
    return at::addmm(residual, x, weight.t());
  }
  return residual + project(x, weight, {}, lora);
}

}  // namespace

at::Tensor Model::Impl::run(const at::Tensor& ids, const Rope::Table& rope_table, AttentionPlan& plan,
                            bool adapted) const {
  if (device.is_cpu()) fit_threads_to_free_cores();
  int64_t T = ids.numel();
  const int64_t H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  // The adapter's pairs: differentiable from its masters while training,
  // else cached in the compute dtype.
  std::vector<LayerLora> trained;
  const std::vector<LayerLora>* lora = nullptr;
  if (adapted && adapter) {
    const LoraAdapter::Impl& a = LoraAccess::of(*adapter);
    const bool grad = at::GradMode::is_enabled() && !a.parameters.empty() && a.parameters.front().requires_grad();
    if (grad) trained = a.fuse(dtype);
    lora = grad ? &trained : &a.fused(dtype);
  }
  auto pair = [&](int64_t l, FusedLora LayerLora::*which) {
    return lora ? &((*lora)[static_cast<size_t>(l)].*which) : nullptr;
  };

  at::Tensor x = weights.embed.index_select(0, ids);
  Rope::Table table = rope_table;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    const LayerWeights& w = weights.layers[static_cast<size_t>(l)];
    at::Tensor qkv = project(rms_norm(x, w.attn_norm), w.wqkv, w.bqkv, pair(l, &LayerLora::qkv));
    // Queries and keys are adjacent heads: one rotation for both.
    at::Tensor qk = Rope::apply(qkv.narrow(1, 0, (H + KH) * d).view({T, H + KH, d}), table);
    at::Tensor k_raw = qkv.narrow(1, H * d, KH * d).view({T, KH, d});
    at::Tensor v = qkv.narrow(1, (H + KH) * d, KH * d).view({T, KH, d});
    at::Tensor attended = plan.attend(l, qk.narrow(1, 0, H), qk.narrow(1, H, KH), k_raw, v);
    if (!attended.defined()) break;  // the plan needs nothing past this layer's keys and values
    if (const at::Tensor kept = plan.rows_after(l); kept.defined()) {
      x = x.index_select(0, kept);
      table = table.rows(kept);
      T = kept.numel();
    }
    x = add_projection(x, attended, w.wo, pair(l, &LayerLora::o));

    // SwiGLU feed-forward.
    at::Tensor gate_up = project(rms_norm(x, w.ffn_norm), w.w_gate_up, {}, pair(l, &LayerLora::gate_up));
    at::Tensor gate = gate_up.narrow(1, 0, config.n_ff), up = gate_up.narrow(1, config.n_ff, config.n_ff);
    x = add_projection(x, at::silu(gate) * up, w.w_down, pair(l, &LayerLora::down));
  }
  return x;
}

at::Tensor Model::Impl::head(const at::Tensor& hidden) const {
  return at::linear(rms_norm(hidden, weights.output_norm), weights.output).to(at::kFloat);
}

at::Tensor id_tensor(const std::vector<int64_t>& ids, at::Device device) {
  return at::tensor(ids, at::kLong).to(device);
}

}  // namespace kvframe::runtime
