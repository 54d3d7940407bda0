// The CPU step backend's weights (cpu_step.h) and when a forward() takes
// that backend (step_kernels.h).
#include "cpu_step.h"

#include <algorithm>
#include <string>

#include "model_impl.h"

namespace kvframe::runtime {
namespace {

std::optional<QuantMatrix> matrix(const GgufFile& file, const std::string& name,
                                  const std::vector<int64_t>& order = {}) {
  const GgufTensorInfo* info = file.find_tensor(name);
  if (!info) return std::nullopt;
  auto m = QuantMatrix::from_tensor(*info, file.bytes_owner());
  if (m && !order.empty()) return m->with_row_order(order);
  return m;
}

// The row order unpermute_rope_rows gives a [n_heads * head_dim] tensor.
std::vector<int64_t> rope_row_order(int64_t n_heads, int64_t head_dim) {
  at::Tensor order = unpermute_rope_rows(at::arange(n_heads * head_dim, at::kLong), n_heads, head_dim);
  return {order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel()};
}

// Qwen2's Q|K|V bias as fp32 (empty without one): libtorch's, so already in
// rope.h's row order (and rounded as the compute dtype rounds it).
std::vector<float> fp32_bias(const LayerWeights& layer) {
  if (!layer.bqkv.defined()) return {};
  at::Tensor b = layer.bqkv.to(at::kCPU, at::kFloat).contiguous();
  return {b.data_ptr<float>(), b.data_ptr<float>() + b.numel()};
}

// What the step path's loops assume: row lengths in whole 32-element blocks,
// fixed-size buffers for a head and for the query heads of one key head.
bool step_shape_supported(const ModelConfig& c) {
  return c.head_dim <= 512 && c.n_head / c.n_head_kv <= 8 && c.n_embd % QuantMatrix::kBlock == 0 &&
         c.n_ff % QuantMatrix::kBlock == 0 && c.n_head * c.head_dim % QuantMatrix::kBlock == 0;
}

// A weight [rows, cols] of the compute dtype, copied as F32 or BF16 rows.
QuantMatrix copy_of(const at::Tensor& weight) {
  at::Tensor values = weight.to(at::kCPU, at::kFloat).contiguous();
  const GgmlType type = weight.scalar_type() == at::kBFloat16 ? GgmlType::kBF16 : GgmlType::kF32;
  return QuantMatrix::of_floats(values.data_ptr<float>(), values.size(0), values.size(1), type);
}

}  // namespace

std::optional<StepWeights> load_step_weights(const GgufFile& file, const ModelConfig& c) {
  if (!step_shape_supported(c)) return std::nullopt;
  const bool permuted = c.arch == "llama";  // as in weights.cpp
  const std::vector<int64_t> q_order = permuted ? rope_row_order(c.n_head, c.head_dim) : std::vector<int64_t>{};
  const std::vector<int64_t> k_order = permuted ? rope_row_order(c.n_head_kv, c.head_dim) : std::vector<int64_t>{};
  StepWeights w;
  auto embed = matrix(file, "token_embd.weight");
  if (!embed) return std::nullopt;
  if (c.tied_embeddings) {
    w.output = std::move(*embed);
  } else {
    auto output = matrix(file, "output.weight");
    if (!output) return std::nullopt;
    w.output = std::move(*output);
    w.untied_embed = std::move(*embed);
  }
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    auto o = matrix(file, p + "attn_output.weight"), down = matrix(file, p + "ffn_down.weight");
    if (!o || !down) return std::nullopt;
    if (c.fused_in_file) {  // the file's own fused tensors, Q/K rows read through partial rotary's order
      auto qkv = matrix(file, p + "attn_qkv.weight", partial_rotary_order(c));
      auto gate_up = matrix(file, p + "ffn_up.weight");
      if (!qkv || !gate_up) return std::nullopt;
      w.layers.push_back({std::move(*qkv), std::move(*o), std::move(*gate_up), std::move(*down), {}});
      continue;
    }
    auto q = matrix(file, p + "attn_q.weight", q_order), k = matrix(file, p + "attn_k.weight", k_order);
    auto v = matrix(file, p + "attn_v.weight");
    auto gate = matrix(file, p + "ffn_gate.weight"), up = matrix(file, p + "ffn_up.weight");
    if (!q || !k || !v || !gate || !up) return std::nullopt;
    w.layers.push_back({QuantMatrix::stack({*q, *k, *v}), std::move(*o), QuantMatrix::stack({*gate, *up}),
                        std::move(*down), {}});
  }
  return w;
}

void set_step_biases(StepWeights& step, const Weights& weights) {
  for (size_t l = 0; l < step.layers.size(); ++l) step.layers[l].bqkv = fp32_bias(weights.layers[l]);
}

std::optional<StepWeights> step_weights_of(const Weights& weights, const ModelConfig& c) {
  if (!step_shape_supported(c)) return std::nullopt;
  StepWeights w;
  w.output = copy_of(weights.output);
  if (!c.tied_embeddings) w.untied_embed = copy_of(weights.embed);
  for (const LayerWeights& l : weights.layers) {
    w.layers.push_back({copy_of(l.wqkv), copy_of(l.wo), copy_of(l.w_gate_up), copy_of(l.w_down), fp32_bias(l)});
  }
  return w;
}

bool Model::Impl::steps_on_cpu(const KvCache& cache, int64_t n) const {
  if (!step || !device.is_cpu() || n > kStepTokens) return false;
  if (dtype != at::kFloat && dtype != at::kBFloat16) return false;
  return std::all_of(cache.k.begin(), cache.k.end(), [&](const at::Tensor& t) { return t.is_contiguous() && t.scalar_type() == dtype; }) &&
         std::all_of(cache.v.begin(), cache.v.end(), [&](const at::Tensor& t) { return t.is_contiguous() && t.scalar_type() == dtype; });
}

}  // namespace kvframe::runtime
