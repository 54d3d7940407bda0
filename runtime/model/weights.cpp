#include "weights.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <string>

namespace kvframe::runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// One GGUF tensor, checked to have torch shape `shape` (outermost first: the
// reverse of GGUF's dims) and a type kvframe reads.
Result<const GgufTensorInfo*> checked_tensor(const GgufFile& file, const std::string& name,
                                             const std::vector<int64_t>& shape) {
  const GgufTensorInfo* info = file.find_tensor(name);
  if (!info) {
    return Error{ErrorCode::kMissingTensor, "tensor '" + name + "' is missing from " + file.path() +
                                                "; the file is incomplete or not a supported model"};
  }
  const std::vector<int64_t> expected(shape.rbegin(), shape.rend());
  if (info->dims != expected) {
    return Error{ErrorCode::kShapeMismatch, "tensor '" + name + "' has shape " + shape_text(info->dims) +
                                                " but the hyperparameters need " + shape_text(expected)};
  }
  if (!dequantize_supported(info->type)) {
    return Error{ErrorCode::kUnsupportedType,
                 "tensor '" + name + "' is " + ggml_type_name(info->type) +
                     "; kvframe dequantizes F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, "
                     "Q4_K, Q5_K and Q6_K — re-quantize the model to one of those"};
  }
  return info;
}

// One GGUF tensor as checked_tensor() checks it, dequantized to fp32 on the CPU.
Result<at::Tensor> dequantize_tensor(const GgufFile& file, const std::string& name,
                                     const std::vector<int64_t>& shape) {
  auto checked = checked_tensor(file, name, shape);
  if (!checked) return checked.error();
  const GgufTensorInfo* info = *checked;
  at::Tensor out = at::empty(shape, at::kFloat);
  const int64_t row = info->dims[0];
  const int64_t rows = info->n_elements() / row;
  const GgmlTypeSize size = ggml_type_size(info->type);
  const int64_t row_bytes = row / size.block_size * size.block_bytes;
  float* dst = out.data_ptr<float>();
  const uint8_t* src = info->data;
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) dequantize(info->type, src + r * row_bytes, dst + r * row, row);
  });
  return out;
}

class Loader {
 public:
  Loader(const GgufFile& file, at::Device device, at::ScalarType dtype, Matrices matrices,
         const std::function<void(int64_t, int64_t)>& on_progress, int64_t total)
      : file_(file), device_(device), dtype_(dtype), matrices_(matrices), on_progress_(on_progress), total_(total) {}

  // fp32 on the CPU, for the fusing and reordering done before placement.
  Result<at::Tensor> cpu(const std::string& name, const std::vector<int64_t>& shape) {
    auto t = dequantize_tensor(file_, name, shape);
    if (t && on_progress_) on_progress_(++done_, total_);
    return t;
  }
  // A weight matrix: dequantized, or only checked (an undefined tensor)
  // when the matrices stay as the file stores them.
  Result<at::Tensor> matrix(const std::string& name, const std::vector<int64_t>& shape) {
    if (matrices_ == Matrices::kDense) return cpu(name, shape);
    auto checked = checked_tensor(file_, name, shape);
    if (!checked) return checked.error();
    if (on_progress_) on_progress_(++done_, total_);
    return at::Tensor();
  }
  // Placed on the device in the compute dtype; undefined stays undefined.
  at::Tensor place(const at::Tensor& t) const { return t.defined() ? t.to(device_, dtype_) : t; }
  // The rows of parts one after another (undefined when they are).
  static at::Tensor cat(const std::vector<at::Tensor>& parts) {
    return parts.front().defined() ? at::cat(parts) : at::Tensor();
  }
  // Norm weights stay fp32: RMSNorm runs in fp32 whatever the compute dtype.
  at::Tensor place_fp32(const at::Tensor& t) const { return t.to(device_, at::kFloat); }

 private:
  const GgufFile& file_;
  at::Device device_;
  at::ScalarType dtype_;
  Matrices matrices_;
  const std::function<void(int64_t, int64_t)>& on_progress_;
  int64_t total_;
  int64_t done_ = 0;
};

#define KV_TRY(var, expr)             \
  auto var##_result = (expr);         \
  if (!var##_result) return var##_result.error(); \
  at::Tensor var = std::move(var##_result).value()

Result<LayerWeights> load_layer(Loader& load, const ModelConfig& c, int64_t layer) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  const int64_t q_rows = c.n_head * c.head_dim, kv_rows = c.n_head_kv * c.head_dim;
  const bool permuted = c.arch == "llama";  // see unpermute_rope_rows

  KV_TRY(attn_norm, load.cpu(p + "attn_norm.weight", {c.n_embd}));
  at::Tensor wqkv, w_gate_up;
  if (c.fused_in_file) {  // one tensor each, already in the loop's order
    KV_TRY(qkv, load.matrix(p + "attn_qkv.weight", {q_rows + 2 * kv_rows, c.n_embd}));
    KV_TRY(gate_up, load.matrix(p + "ffn_up.weight", {2 * c.n_ff, c.n_embd}));
    wqkv = qkv, w_gate_up = gate_up;
  } else {
    KV_TRY(wq, load.matrix(p + "attn_q.weight", {q_rows, c.n_embd}));
    KV_TRY(wk, load.matrix(p + "attn_k.weight", {kv_rows, c.n_embd}));
    KV_TRY(wv, load.matrix(p + "attn_v.weight", {kv_rows, c.n_embd}));
    KV_TRY(gate, load.matrix(p + "ffn_gate.weight", {c.n_ff, c.n_embd}));
    KV_TRY(up, load.matrix(p + "ffn_up.weight", {c.n_ff, c.n_embd}));
    if (permuted && wq.defined()) {
      wq = unpermute_rope_rows(wq, c.n_head, c.head_dim);
      wk = unpermute_rope_rows(wk, c.n_head_kv, c.head_dim);
    }
    wqkv = Loader::cat({wq, wk, wv}), w_gate_up = Loader::cat({gate, up});
  }
  if (const std::vector<int64_t> order = partial_rotary_order(c); !order.empty() && wqkv.defined()) {
    wqkv = wqkv.index_select(0, at::tensor(order, at::kLong));
  }
  KV_TRY(wo, load.matrix(p + "attn_output.weight", {c.n_embd, q_rows}));
  KV_TRY(ffn_norm, load.cpu(p + "ffn_norm.weight", {c.n_embd}));
  KV_TRY(down, load.matrix(p + "ffn_down.weight", {c.n_embd, c.n_ff}));

  LayerWeights w;
  if (c.qkv_bias) {
    KV_TRY(bq, load.cpu(p + "attn_q.bias", {q_rows}));
    KV_TRY(bk, load.cpu(p + "attn_k.bias", {kv_rows}));
    KV_TRY(bv, load.cpu(p + "attn_v.bias", {kv_rows}));
    if (permuted) {
      bq = unpermute_rope_rows(bq, c.n_head, c.head_dim);
      bk = unpermute_rope_rows(bk, c.n_head_kv, c.head_dim);
    }
    w.bqkv = load.place(at::cat({bq, bk, bv}));
  }
  w.attn_norm = load.place_fp32(attn_norm);
  w.wqkv = load.place(wqkv);
  w.wo = load.place(wo);
  w.ffn_norm = load.place_fp32(ffn_norm);
  w.w_gate_up = load.place(w_gate_up);
  w.w_down = load.place(down);
  if (c.qk_norm) {
    KV_TRY(q_norm, load.cpu(p + "attn_q_norm.weight", {c.head_dim}));
    KV_TRY(k_norm, load.cpu(p + "attn_k_norm.weight", {c.head_dim}));
    w.q_norm = load.place_fp32(q_norm);
    w.k_norm = load.place_fp32(k_norm);
  }
  if (c.post_norms) {
    KV_TRY(post_attn_norm, load.cpu(p + "post_attention_norm.weight", {c.n_embd}));
    KV_TRY(post_ffn_norm, load.cpu(p + "post_ffw_norm.weight", {c.n_embd}));
    w.post_attn_norm = load.place_fp32(post_attn_norm);
    w.post_ffn_norm = load.place_fp32(post_ffn_norm);
  }
  return w;
}

}  // namespace

namespace {

// Rows viewed as [n_heads, a, b, rest...], a and b swapped.
at::Tensor swap_row_pairs(const at::Tensor& rows, int64_t n_heads, int64_t a, int64_t b) {
  std::vector<int64_t> split = {n_heads, a, b};
  std::vector<int64_t> rest(rows.sizes().begin() + 1, rows.sizes().end());
  split.insert(split.end(), rest.begin(), rest.end());
  return rows.reshape(split).transpose(1, 2).reshape(rows.sizes()).contiguous();
}

}  // namespace

at::Tensor unpermute_rope_rows(const at::Tensor& rows, int64_t n_heads, int64_t head_dim) {
  return swap_row_pairs(rows, n_heads, head_dim / 2, 2);
}

at::Tensor permute_rope_rows(const at::Tensor& rows, int64_t n_heads, int64_t head_dim) {
  return swap_row_pairs(rows, n_heads, 2, head_dim / 2);
}

std::vector<int64_t> partial_rotary_order(const ModelConfig& c) {
  const int64_t d = c.head_dim, r = c.rope.rotated();
  if (r == d) return {};
  // Within a head, the file's pairs (i, i + r/2) go to (i, i + d/2); its
  // passed-through elements r.. fill the pairs between, half in each half.
  std::vector<int64_t> head;
  for (int64_t half = 0; half < 2; ++half) {
    for (int64_t i = 0; i < r / 2; ++i) head.push_back(half * r / 2 + i);
    for (int64_t i = 0; i < (d - r) / 2; ++i) head.push_back(r + half * (d - r) / 2 + i);
  }
  std::vector<int64_t> order;
  const int64_t rotated_heads = c.n_head + c.n_head_kv;
  for (int64_t h = 0; h < rotated_heads; ++h) {
    for (int64_t j : head) order.push_back(h * d + j);
  }
  for (int64_t v = rotated_heads * d; v < (c.n_head + 2 * c.n_head_kv) * d; ++v) order.push_back(v);
  return order;
}

Result<Weights> load_weights(const GgufFile& file, const ModelConfig& c, at::Device device,
                             at::ScalarType dtype, Matrices matrices,
                             const std::function<void(int64_t, int64_t)>& on_progress) {
  const int64_t per_layer = (c.fused_in_file ? 6 : 9) + (c.qkv_bias ? 3 : 0) + (c.qk_norm ? 2 : 0) + (c.post_norms ? 2 : 0);
  const int64_t total = 2 + (c.tied_embeddings ? 0 : 1) + c.n_layer * per_layer;
  Loader load(file, device, dtype, matrices, on_progress, total);

  Weights w;
  KV_TRY(embed, load.matrix("token_embd.weight", {c.n_vocab, c.n_embd}));
  KV_TRY(output_norm, load.cpu("output_norm.weight", {c.n_embd}));
  w.embed = load.place(embed);
  w.output_norm = load.place_fp32(output_norm);
  if (c.tied_embeddings) {
    w.output = w.embed;
  } else {
    KV_TRY(output, load.matrix("output.weight", {c.n_vocab, c.n_embd}));
    w.output = load.place(output);
  }
  for (int64_t l = 0; l < c.n_layer; ++l) {
    auto layer = load_layer(load, c, l);
    if (!layer) return layer.error();
    w.layers.push_back(std::move(layer).value());
  }
  return w;
}

#undef KV_TRY

void drop_dense_matrices(Weights& w) {
  w.embed = w.output = at::Tensor();
  for (LayerWeights& layer : w.layers) layer.wqkv = layer.wo = layer.w_gate_up = layer.w_down = at::Tensor();
}

Weights random_weights(const ModelConfig& c, at::Device device, at::ScalarType dtype, uint64_t seed) {
  at::manual_seed(seed);  // seeds the CPU and CUDA generators alike
  const auto options = at::TensorOptions(dtype).device(device);
  auto matrix = [&](int64_t rows, int64_t cols) { return at::randn({rows, cols}, options) * 0.02; };
  auto norm = [&] { return at::ones({c.n_embd}, options.dtype(at::kFloat)); };
  const int64_t qkv_rows = (c.n_head + 2 * c.n_head_kv) * c.head_dim;
  Weights w;
  w.embed = matrix(c.n_vocab, c.n_embd);
  w.output_norm = norm();
  w.output = c.tied_embeddings ? w.embed : matrix(c.n_vocab, c.n_embd);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    LayerWeights layer;
    layer.attn_norm = norm();
    layer.wqkv = matrix(qkv_rows, c.n_embd);
    if (c.qkv_bias) layer.bqkv = at::zeros({qkv_rows}, options);
    layer.wo = matrix(c.n_embd, c.n_head * c.head_dim);
    layer.ffn_norm = norm();
    layer.w_gate_up = matrix(2 * c.n_ff, c.n_embd);
    layer.w_down = matrix(c.n_embd, c.n_ff);
    if (c.qk_norm) layer.q_norm = layer.k_norm = at::ones({c.head_dim}, options.dtype(at::kFloat));
    if (c.post_norms) layer.post_attn_norm = layer.post_ffn_norm = norm();
    w.layers.push_back(std::move(layer));
  }
  return w;
}

}  // namespace kvframe::runtime
